"""Issue 26: occlusion's copies run on boxes (core.occlusion_regions) give the map of every copy run whole,
checked against the brute-force loop of test_occlusion in float64 on a net with every kind of layer the boxes
run (strides, padding, dilation, groups, max- and average-pooling, a residual add, a concatenation, elementwise
functions); and every model the boxes cannot serve runs its copies whole, with the same map."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from test_occlusion import brute_force
from torch import nn

from inspector.core.attribution.occlusion import occlusion, window_starts
from inspector.core.attribution.passes import regions as regions
from inspector.core.attribution.passes.region_graph import graph_of

pytestmark = pytest.mark.numeric


class Every(nn.Module):
    """Each kind of layer the boxes run, before a head they do not (global pooling, linear)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.stem = nn.Conv2d(3, 8, 5, stride=2, padding=2)
        self.norm = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)  # its padding is -inf: the values before it go negative
        self.wide = nn.Conv2d(8, 8, 3, padding=2, dilation=2, groups=2)
        self.act = nn.Hardswish()
        self.narrow = nn.Conv2d(8, 4, 1)
        self.side = nn.Conv2d(8, 4, 3, padding=1, bias=False)
        self.mean = nn.AvgPool2d(3, stride=1, padding=1)  # padding counted: zeros in the mean
        self.down = nn.Conv2d(8, 6, 3, stride=2, padding=1)
        self.head = nn.Linear(6, 5)
        with torch.no_grad():
            self.norm.running_mean.uniform_(-0.5, 0.5)
            self.norm.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        x = self.pool(self.norm(self.stem(x)))
        y = self.act(self.wide(x)) + x  # a residual add
        z = torch.cat([self.narrow(y), torch.sigmoid(self.side(y)) * self.narrow(y)], dim=1)
        z = self.mean(F.relu(z))
        return self.head(F.adaptive_avg_pool2d(self.down(z), 1).flatten(1))


@pytest.fixture
def boxed(monkeypatch):
    """Boxes used wherever they can be (a small net's estimate may not save enough), and how many passes ran on
    them."""
    monkeypatch.setattr(regions, "WORTH", 10.0)
    used = []
    run = regions.Regions.run

    def counted(self, which, b=None):
        used.append(which)
        return run(self, which, b)

    monkeypatch.setattr(regions.Regions, "run", counted)
    return used


@pytest.mark.parametrize("window, stride", [(5, 3), (7, 7), (1, 1), (12, 5)])
def test_boxes_give_the_brute_force_map_in_float64(boxed, window, stride):
    model = Every().double().eval()
    x = torch.randn(1, 3, 23, 26, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    baseline = torch.randn(x.shape, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    found = occlusion(model, x, target=3, window=window, stride=stride, baseline=baseline, batch=4)
    windows = len(window_starts(23, window, stride)) * len(window_starts(26, window, stride))
    assert len(boxed) == 1 + -(-windows // 4)  # the check (first and last window), then every pass on boxes
    np.testing.assert_allclose(found.map, brute_force(model, x, 3, window, stride, baseline), rtol=2e-7,
                               atol=1e-9)


def test_the_split_is_the_last_layer_every_path_passes_before_the_head():
    """Every's local layers end at `down`; the adds and the concatenation are passed by every path only at their
    output, never inside the two branches."""
    model = Every().eval()
    x = torch.zeros(1, 3, 23, 26)
    graph = graph_of(model, x)
    local = {n.name for n in graph.ops}
    assert {"x", "stem", "norm", "pool", "wide", "act", "add", "narrow", "side", "sigmoid", "mul", "cat", "relu",
            "mean", "down"} <= local and "head" not in local and "adaptive_avg_pool2d" not in local
    spots = [(y, x0) for y in window_starts(23, 5, 3) for x0 in window_starts(26, 5, 3)]
    regions.WORTH, before = 10.0, regions.WORTH
    try:
        planned = regions.plan(graph, x, spots, 5)
    finally:
        regions.WORTH = before
    candidates = {"stem", "norm", "pool", "add", "cat", "relu", "mean", "down"}  # passed by every path
    assert planned.split.name in candidates
    assert [n.name for n in planned.prefix][0] == "x" and planned.prefix[-1] is planned.split


def test_a_box_reaches_what_its_window_changes_and_no_further():
    """A 3x3 convolution at stride 2, padding 1, on a 10-wide input: rows 4..5 changed reach outputs 2 (reads
    3..5) and 3 (reads 5..7); a pass of boxes reads rows 3..7 (2 * 2 - 1 to 2 * 3 + 1)."""
    op = regions.Op(node=None, kind="window", k=(3, 3), s=(2, 2), p=(1, 1), d=(1, 1))
    box = regions._Box(np.array([4, 0, 8]), np.array([4, 0, 8]), 2, 2)
    reach = regions._reach(op, box, (1, 1, 5, 5))
    # window 0..1 reaches outputs 0 and 1 (output 1 reads 1..3); 8..9 reaches 4 only, the box kept 2 wide inside
    assert reach.h == 2 and reach.r.tolist() == [2, 0, 3]
    r, _c, h, _w = regions._needed(op, reach)
    assert r.tolist() == [3, -1, 5] and h == 5


def test_resnet18_on_boxes_gives_the_whole_copies_map():
    torchvision = pytest.importorskip("torchvision")
    model = torchvision.models.resnet18().eval()
    x = torch.randn(1, 3, 96, 96, generator=torch.Generator().manual_seed(0))
    found = occlusion(model, x, target=7, window=16, stride=8)
    with regions.whole_copies():
        whole = occlusion(model, x, target=7, window=16, stride=8)
    planned = next(iter(graph_of(model, x).plans.values()))
    assert planned is not None and planned.split.name != "conv1"  # boxes used, past the stem
    assert np.linalg.norm(found.map - whole.map) <= 1e-5 * np.linalg.norm(whole.map)


class Branchy(nn.Module):
    """A value read into Python: fx cannot trace it."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(3)
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        y = self.conv(x)
        if y.mean() > 0:
            y = -y
        return self.head(y.mean((2, 3)))


def test_models_the_boxes_cannot_serve_run_their_copies_whole(boxed):
    x = torch.randn(1, 3, 12, 12, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    branchy = Branchy().double().eval()
    found = occlusion(branchy, x, target=1, window=4, stride=2)
    np.testing.assert_allclose(found.map, brute_force(branchy, x, 1, 4, 2, torch.zeros_like(x)), rtol=2e-7,
                               atol=1e-9)
    assert boxed == []
    hooked = Every().double().eval()
    seen = []
    hooked.wide.register_forward_hook(lambda m, i, o: seen.append(tuple(o.shape)))
    occlusion(hooked, x, target=1, window=4, stride=2, batch=5)
    assert boxed == [] and set(seen[1:]) == {(5, 8, 3, 3)}  # whole copies went through the hook


def test_a_norm_put_in_training_mode_after_a_job_is_not_run_on_boxes(boxed):
    model = Every().double().eval()
    x = torch.randn(1, 3, 23, 26, generator=torch.Generator().manual_seed(8), dtype=torch.float64)
    occlusion(model, x, target=1, window=5, stride=5, batch=8)
    assert len(boxed) == 1 + 4  # the check, then 5 x 6 windows in 4 passes
    model.norm.train()  # batch statistics: a copy's values depend on the others'
    with torch.no_grad():
        occlusion(model, x, target=1, window=5, stride=5, batch=8)
    assert len(boxed) == 5


def test_a_swapped_layer_after_a_job_is_what_the_next_job_runs():
    model = Every().double().eval()
    x = torch.randn(1, 3, 23, 26, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    regions.WORTH, before = 10.0, regions.WORTH
    try:
        occlusion(model, x, target=0, window=6, stride=3)
        model.wide = nn.Conv2d(8, 8, 3, padding=1).double()
        found = occlusion(model, x, target=0, window=6, stride=3)
    finally:
        regions.WORTH = before
    np.testing.assert_allclose(found.map, brute_force(model, x, 0, 6, 3, torch.zeros_like(x)), rtol=2e-7,
                               atol=1e-9)


def test_boxes_that_read_the_wrong_place_are_caught_and_the_copies_run_whole(boxed, monkeypatch):
    """The job's check (two copies occluded with x itself must give the model's output on x) refuses boxes
    that read their reach one row off."""
    needed = regions._needed

    def off_by_one(op, box):
        r, c, h, w = needed(op, box)
        return r + 1, c, h, w

    monkeypatch.setattr(regions, "_needed", off_by_one)
    model = Every().double().eval()
    x = torch.randn(1, 3, 23, 26, generator=torch.Generator().manual_seed(6), dtype=torch.float64)
    found = occlusion(model, x, target=2, window=5, stride=3)
    assert boxed == [[0, len(window_starts(23, 5, 3)) * len(window_starts(26, 5, 3)) - 1]]  # the check only
    np.testing.assert_allclose(found.map, brute_force(model, x, 2, 5, 3, torch.zeros_like(x)), rtol=2e-7,
                               atol=1e-9)


class InPlace(nn.Module):
    """An in-place ReLU on a value another layer reads too: not run on boxes (it would change that value)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(7)
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.relu = nn.ReLU(inplace=True)
        self.other = nn.Conv2d(4, 4, 3, padding=1)
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        y = self.conv(x)
        z = self.other(y)
        return self.head((self.relu(y) + z).mean((2, 3)))


def test_an_in_place_layer_on_a_value_read_twice_is_not_local():
    model = InPlace().eval()
    graph = graph_of(model, torch.zeros(1, 3, 10, 10))
    assert {n.name for n in graph.ops} == {"x", "conv", "other"}


def test_a_model_and_its_trace_are_freed_together(boxed):
    """The trace is remembered per model (the app loads one model after another): it must not keep it alive."""
    import gc
    import weakref

    model = Every().eval()
    occlusion(model, torch.randn(1, 3, 23, 26, generator=torch.Generator().manual_seed(9)), target=0, window=5,
              stride=3)
    assert boxed and len(regions.graph_of.__globals__["_GRAPHS"]) >= 1
    gone = weakref.ref(model)
    del model
    gc.collect()
    assert gone() is None


def test_a_model_remembers_its_last_eight_plans():
    model = Every().eval()
    x = torch.zeros(1, 3, 23, 26)
    graph = graph_of(model, x)
    for window in range(1, 11):
        spots = [(y, x0) for y in window_starts(23, window, window) for x0 in window_starts(26, window, window)]
        regions.plan(graph, x, spots, window)
    assert [key[1] for key in graph.plans] == list(range(3, 11))  # windows 1 and 2 forgotten


def test_a_plan_that_fails_runs_the_copies_whole(boxed, monkeypatch):
    """Planning is part of what may fail on a model nobody foresaw: the job then runs whole, not stops."""
    def fails(*_args):
        raise ValueError("a layer the boxes did not foresee")

    monkeypatch.setattr(regions, "_boxes", fails)
    model = Every().double().eval()
    x = torch.randn(1, 3, 23, 26, generator=torch.Generator().manual_seed(10), dtype=torch.float64)
    found = occlusion(model, x, target=4, window=6, stride=4)
    assert boxed == []
    np.testing.assert_allclose(found.map, brute_force(model, x, 4, 6, 4, torch.zeros_like(x)), rtol=2e-7,
                               atol=1e-9)


def test_tracing_and_recording_start_no_progress_bar_and_so_no_thread(monkeypatch):
    """fx's Interpreter.run makes a tqdm bar on every run; disabled, it still started tqdm's monitor thread,
    which outlived the job (the app's leak check caught it when its occlusion test ran alone)."""
    import tqdm.std

    made = []
    monkeypatch.setattr(tqdm.std.tqdm, "__new__", lambda cls, *a, **k: made.append(cls) or object.__new__(cls))
    net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 2, 3)).eval()
    x = torch.randn(1, 3, 6, 6)
    graph = graph_of(net, x)
    assert graph is not None and made == []
    nodes = list(graph.traced.graph.nodes)
    values = regions.record(graph.traced, x, [nodes[1]], nodes[1])
    torch.testing.assert_close(values[nodes[1]], net[0](x), rtol=0, atol=0)
    assert made == []
