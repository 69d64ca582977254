"""Statistics off the critical path: a run computes them only for `RunSpec.stats_now`, and
`complete_statistics` works out the rest afterwards -- the same numbers the run would have
computed, from the values as they were at capture time, even where the model later changed
that memory in place."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch
from torch import nn

from inspector.core import RunSpec, Sharing, run
from inspector.core.engine.deferred import complete_statistics, with_statistics

pytestmark = pytest.mark.numeric  # CI runs these again under another oneDNN instruction set

SITES = "output,grad_output,params"


def reference(array) -> dict:
    """Float64 numpy statistics, computed independently of the engine."""
    a = np.asarray(array, dtype=np.float64).ravel()
    return {"mean": a.mean(), "std": a.std(), "min": a.min(), "max": a.max(),
            "l2": np.sqrt((a ** 2).sum()), "zero_fraction": (a == 0).mean()}


def assert_matches(stats, array, rel=1e-5):
    assert stats.shape == np.shape(array)
    for name, value in reference(array).items():
        assert getattr(stats, name) == pytest.approx(value, rel=rel, abs=1e-6), name


class BnRelu(nn.Module):
    """conv -> bn -> ReLU(inplace=True): the ReLU rewrites bn's output in place."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU(inplace=True)
        self.flat = nn.Flatten()
        self.fc = nn.Linear(4 * 6 * 6, 3)

    def forward(self, x):
        return self.fc(self.flat(self.relu(self.bn(self.conv(x)))))


def bn_relu():
    torch.manual_seed(0)
    model = BnRelu().eval()
    with torch.no_grad():  # a visible spread of running statistics, so bn's output has negatives
        model.bn.running_mean.uniform_(-0.5, 0.5)
        model.bn.running_var.uniform_(0.5, 2.0)
    return model, torch.randn(1, 3, 6, 6)


LAYERS = ("conv", "bn", "relu", "flat", "fc")


def test_only_the_visible_layer_gets_statistics_in_the_run():
    model, x = bn_relu()
    result = run(model, x, RunSpec.make(LAYERS, SITES, target="sum", stats_now=["fc"]))
    now = {n for n, c in result.captures.items() if c.stats is not None}
    assert now == {"fc:output", "fc:grad_output", "fc.weight:grad", "fc.bias:grad"}
    assert sorted(result.stats_pending()) == sorted(set(result.captures) - now)
    assert result.stats_deferred["bn:output"] == "float32"
    assert result.summary()["captures"].keys() == now


def test_deferred_statistics_are_the_in_run_ones_at_capture_time():
    model, x = bn_relu()
    everything = RunSpec.make(LAYERS, SITES, target="sum")
    deferred = replace(everything, stats_now=("relu",))
    shared_all, shared_later = Sharing(), Sharing()
    with torch.no_grad():  # what bn returned, before the in-place ReLU rewrote it
        bn_out = model.bn(model.conv(x)).numpy().copy()
    for _ in range(3):  # the first runs copy; later ones share memory where runs showed it safe
        full = run(model, x, everything, sharing=shared_all)
        later = run(model, x, deferred, sharing=shared_later)
        assert later.captures["bn:output"].stats is None
        stats = complete_statistics(later)
        assert stats.keys() == set(later.stats_pending())
        assert later.captures["bn:output"].stats is None  # the result itself is not changed
        for name, s in stats.items():
            assert s == full.captures[name].stats, name  # the very numbers the run computes
            assert_matches(s, later[name], rel=1e-4)
        assert_matches(stats["bn:output"], bn_out, rel=1e-4)
        assert stats["bn:output"].min < 0 and stats["bn:output"].zero_fraction == 0
        assert later.captures["relu:output"].stats.zero_fraction > 0.2
        filled = with_statistics(later, stats)
        assert all(c.stats is not None for c in filled.captures.values()) and not filled.stats_pending()
    assert shared_later.safe()  # sharing was in play


class SometimesInPlace(nn.Module):
    inplace = True

    def __init__(self):
        super().__init__()
        self.on = False

    def forward(self, x):
        return x.mul_(-3) if self.on else x


def test_a_shared_capture_changed_in_place_later_keeps_its_capture_time_values():
    # Two runs show that nothing changes 0:output, so it shares the model's memory; then the
    # next module starts rewriting it in place. The deferred statistics must not see that.
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(4, 5), SometimesInPlace(), nn.Linear(5, 2))
    spec = RunSpec.make(["0", "1", "2"], "output", target="sum", stats_now=["2"])
    sharing = Sharing()
    for _ in range(2):
        run(model, torch.randn(3, 4), spec, sharing=sharing)
    assert "0:output" in sharing.safe()
    model[1].on = True
    x = torch.randn(3, 4)
    result = run(model, x, spec, sharing=sharing)
    expected = model[0](x).detach().numpy()
    stats = complete_statistics(result)
    np.testing.assert_allclose(result["0:output"], expected, rtol=1e-6)
    assert_matches(stats["0:output"], expected)
    assert_matches(stats["1:output"], -3 * expected)


class AddsLater(nn.Module):
    """`out += 1` in the parent's code, where no module hook sees it (the engine runs again)."""

    def __init__(self):
        super().__init__()
        self.lin, self.relu = nn.Linear(3, 3), nn.ReLU()
        self.add = False

    def forward(self, x):
        out = self.lin(x)
        if self.add:
            out += 1
        return self.relu(out)


def test_a_run_done_again_with_copies_defers_the_right_values():
    torch.manual_seed(2)
    model = AddsLater()
    spec = RunSpec.make(["lin", "relu"], "output", target="sum", stats_now=[])
    sharing = Sharing()
    for _ in range(2):
        run(model, torch.randn(2, 3), spec, sharing=sharing)
    model.add = True
    x = torch.randn(2, 3)
    result = run(model, x, spec, sharing=sharing)
    assert any("Ran twice" in e.what for e in result.events)
    stats = complete_statistics(result)
    assert_matches(stats["lin:output"], model.lin(x).detach().numpy())


def test_other_dtypes_report_what_was_captured():
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2)).to(torch.bfloat16)
    x = torch.randn(2, 3).to(torch.bfloat16)
    spec = RunSpec.make(["0", "1"], "output,grad_output", target="sum")
    full = run(model, x, spec)
    later = run(model, x, replace(spec, stats_now=()))
    stats = complete_statistics(later)
    assert stats["0:output"].dtype == "bfloat16"
    assert stats == {name: c.stats for name, c in full.captures.items()}


def test_parameter_gradients_belong_to_their_layer_and_keep_stats_ignores_deferral():
    spec = RunSpec.make(["a.b", "c"], "output,params", stats_now=["a.b"])
    assert spec.stats_in_run("a.b", "output") and spec.stats_in_run("a.b.weight", "grad")
    assert not spec.stats_in_run("c", "output") and not spec.stats_in_run("c.weight", "grad")
    assert RunSpec.make(["c"]).stats_in_run("c", "output") and not RunSpec.make(["c"]).defers_stats
    model = nn.Sequential(nn.Linear(3, 2))
    kept = run(model, torch.ones(1, 3), replace(RunSpec.make(["0"], "output"), keep="stats", stats_now=()))
    assert kept.captures["0:output"].stats is not None and not kept.stats_deferred
