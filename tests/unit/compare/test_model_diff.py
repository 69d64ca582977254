"""Two models compared layer by layer: values against numpy and plain PyTorch, the first divergent
layer of a checkpoint with one layer changed, identical checkpoints, and errors naming both sides."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest
import torch
from safetensors.torch import save_file

from inspector.core import load_model
from inspector.core.compare.diff import divergence
from inspector.core.compare.pair import diff_models, load_pair
from inspector.core.common.errors import MismatchError, ModelLoadError

pytestmark = pytest.mark.numeric  # CI runs these again under another oneDNN instruction set

NETS = textwrap.dedent(
    """
    import torch
    from torch import nn

    class Net(nn.Module):
        input_shape = (1, 6)

        def __init__(self, classes=4):
            super().__init__()
            self.fc1 = nn.Linear(6, 8)
            self.act1 = nn.Tanh()
            self.fc2 = nn.Linear(8, 8)
            self.act2 = nn.Tanh()
            self.fc3 = nn.Linear(8, classes)

        def forward(self, x):
            return self.fc3(self.act2(self.fc2(self.act1(self.fc1(x)))))

    def Wide():
        return Net(classes=5)
    """
)
LAYERS = ("fc1", "act1", "fc2", "act2", "fc3")


@pytest.fixture
def nets(tmp_path):
    path = tmp_path / "nets.py"
    path.write_text(NETS)
    return str(path)


@pytest.fixture
def x():
    return torch.linspace(-1.0, 1.0, 6).reshape(1, 6)


def reference(module, x, cls=None):
    """Outputs and output gradients of every layer with plain PyTorch (no engine), and the class used."""
    acts = {}
    h = x
    for name in LAYERS:
        h = getattr(module, name)(h)
        h.retain_grad()
        acts[name] = h
    cls = int(h[0].argmax()) if cls is None else cls
    h[0, cls].backward()
    out = {f"{n}:output": t.detach().numpy().copy() for n, t in acts.items()}
    out.update({f"{n}:grad_output": t.grad.numpy().copy() for n, t in acts.items()})
    return out, cls


def numpy_divergence(a, b):
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    rel = np.linalg.norm(a - b) / max(np.linalg.norm(a), 1e-12)
    cos = a @ b / (np.linalg.norm(a) * np.linalg.norm(b))
    return rel, cos, np.abs(a - b).max()


def test_divergence_of_two_seeded_models_matches_numpy(nets, x):
    first, second = load_model(f"{nets}:Net", seed=1), load_model(f"{nets}:Net", seed=2)
    diff = diff_models(first, second, x, "all", "output,grad_output")
    ref_a, cls = reference(load_model(f"{nets}:Net", seed=1).module, x)
    ref_b, _ = reference(load_model(f"{nets}:Net", seed=2).module, x, cls)  # the first model's class
    assert diff.first.target_index == diff.second.target_index == cls
    expected = [f"{n}:{s}" for n in LAYERS for s in ("output", "grad_output")] + ["output"]
    assert [r.key for r in diff.rows] == expected
    for row in diff.rows:
        key = "fc3:output" if row.key == "output" else row.key
        rel, cos, max_abs = numpy_divergence(ref_a[key], ref_b[key])
        assert row.rel_l2 == pytest.approx(rel, rel=1e-5)
        assert row.cosine == pytest.approx(cos, abs=1e-6)
        assert row.max_abs == pytest.approx(max_abs, rel=1e-5)
    assert diff.first_divergent == "fc1:output"  # different seeds: every layer differs from the first on
    assert [r.forward for r in diff.rows] == [k.endswith(":output") or k == "output" for k in expected]


def test_divergence_edge_cases():
    assert divergence(np.zeros(3), np.zeros(3)) == (0.0, 1.0, 0.0)
    rel, cos, max_abs = divergence(np.zeros(3, np.float32), np.array([0, 3, -4], np.float32))
    assert (rel, cos, max_abs) == (pytest.approx(5 / 1e-12), 0.0, 4.0)  # ||a|| floored at tiny
    rel, cos, _ = divergence(np.array([1.0, 2.0]), np.array([-1.0, -2.0]))
    assert rel == pytest.approx(2.0) and cos == pytest.approx(-1.0)


def _checkpoints(nets, tmp_path, perturb: str | None):
    model = load_model(f"{nets}:Net", seed=7).module
    state = {k: v.detach().clone().contiguous() for k, v in model.state_dict().items()}
    save_file(state, str(tmp_path / "a.safetensors"))
    if perturb:
        state[perturb] = state[perturb] + 0.01
    save_file(state, str(tmp_path / "b.safetensors"))
    return str(tmp_path / "a.safetensors"), str(tmp_path / "b.safetensors")


def test_one_layer_perturbed_is_the_first_divergent(nets, x, tmp_path):
    a, b = _checkpoints(nets, tmp_path, "fc2.weight")
    first, second = load_pair(f"{nets}:Net", a, against=b)
    diff = diff_models(first, second, x, "all", "output,grad_output")
    assert diff.first_divergent == "fc2:output"
    rows = {r.key: r for r in diff.rows}
    for key in ("fc1:output", "act1:output"):  # before the change: bit-identical
        assert rows[key].rel_l2 == 0.0 and rows[key].max_abs == 0.0
    assert rows["fc1:grad_output"].rel_l2 > 0  # gradients below the change move, but do not decide
    assert diff.only_in_first == [] and diff.only_in_second == []


def test_identical_checkpoints_report_none(nets, x, tmp_path):
    a, b = _checkpoints(nets, tmp_path, None)
    first, second = load_pair(f"{nets}:Net", a, against=b)
    diff = diff_models(first, second, x, "all", "output,grad_output")
    assert diff.first_divergent is None
    assert all(r.rel_l2 == 0.0 and r.max_abs == 0.0 for r in diff.rows)
    assert all(d.delta == 0.0 for d in diff.deltas)


def test_outputs_of_different_shapes_name_both_sides(nets, x):
    first, second = load_model(f"{nets}:Net", seed=1), load_model(f"{nets}:Wide", seed=1)
    with pytest.raises(MismatchError) as err:
        diff_models(first, second, x, "fc1,fc2")
    message = str(err.value)
    assert f"{nets}:Net" in message and f"{nets}:Wide" in message and "(1, 4)" in message and "(1, 5)" in message


def test_keys_in_one_model_only_are_listed(nets, x, tmp_path):
    other = tmp_path / "other.py"
    other.write_text(NETS.replace("self.act2 = nn.Tanh()", "self.act2 = nn.Tanh()\n        self.extra = nn.Identity()")
                     .replace("self.act2(self.fc2", "self.extra(self.act2(self.fc2").replace("(x)))))", "(x))))))"))
    first, second = load_model(f"{nets}:Net", seed=3), load_model(f"{other}:Net", seed=3)
    diff = diff_models(first, second, x, "all", "output")
    assert diff.only_in_second == ["extra:output"] and diff.only_in_first == []
    assert diff.first_divergent is None  # same seed, same layers: nothing else differs


def test_weights_that_do_not_fit_name_both_sides(nets, tmp_path):
    a, _ = _checkpoints(nets, tmp_path, None)
    state = load_model(f"{nets}:Wide", seed=1).module.state_dict()
    save_file({k: v.contiguous() for k, v in state.items()}, str(tmp_path / "wide.safetensors"))
    with pytest.raises(ModelLoadError) as err:
        load_pair(f"{nets}:Net", a, against=str(tmp_path / "wide.safetensors"))
    message = str(err.value)
    assert "second model" in message and "wide.safetensors" in message and "a.safetensors" in message
    assert "fc3.weight (file (5, 8), model (4, 8))" in message


def test_mismatched_devices_name_both_sides(nets, x):
    first, second = load_model(f"{nets}:Net", seed=1), load_model(f"{nets}:Net", seed=2)
    second.module.to("meta")
    with pytest.raises(MismatchError) as err:
        diff_models(first, second, x, "all", device=None)
    assert "different devices" in str(err.value) and "on cpu" in str(err.value) and "on meta" in str(err.value)


def test_edits_on_one_side_only(nets, x):
    first, second = load_model(f"{nets}:Net", seed=1), load_model(f"{nets}:Net", seed=1)
    diff = diff_models(first, second, x, "all", "output", edits=["act1:output=zero()"], second_edits=[])
    assert diff.first_divergent == "act1:output"
    assert diff.row("act1:output").rel_l2 == pytest.approx(1e12 * np.linalg.norm(diff.second["act1:output"]))


def test_cli_json_shape_and_out(nets, x, tmp_path, capsys):
    from inspector.cli import main

    a, b = _checkpoints(nets, tmp_path, "fc3.bias")
    np.save(tmp_path / "x.npy", x.numpy())
    out = tmp_path / "d.npz"
    code = main(["diff", "--model", f"{nets}:Net", "--weights", a, "--against", b, "--input", str(tmp_path / "x.npy"),
                 "--layers", "fc2,fc3", "--sites", "output,grad_output", "--json", "--out", str(out)])
    assert code == 0
    found = json.loads(capsys.readouterr().out)
    assert list(found) == ["first_divergent", "threshold", "rows", "only_in_first", "only_in_second", "predictions",
                           "seeds"]
    assert found["seeds"] == {"first": None, "second": None}  # weights files: no seeds
    assert found["first_divergent"] == "fc3:output" and found["threshold"] == 1e-3
    assert [r["key"] for r in found["rows"]] == ["fc2:output", "fc2:grad_output", "fc3:output", "fc3:grad_output",
                                                 "output"]
    assert all(list(r) == ["key", "rel_l2", "cosine", "max_abs"] for r in found["rows"])
    assert {"first", "second", "deltas"} <= set(found["predictions"])
    arrays = np.load(out)
    np.testing.assert_allclose(arrays["second/fc3:output"] - arrays["first/fc3:output"], arrays["diff/fc3:output"])
    np.testing.assert_allclose(arrays["diff/fc3:output"], np.full((1, 4), 0.01), atol=1e-6)  # the bias moved by 0.01


def test_cli_errors_are_one_line_exit_2(nets, tmp_path, capsys):
    from inspector.cli import main

    a, _ = _checkpoints(nets, tmp_path, None)
    code = main(["diff", "--model", f"{nets}:Net", "--weights", a, "--against", str(tmp_path / "missing.pt"),
                 "--input", "sample:toy_ones"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "second model" in err and "missing.pt" in err


def test_workbench_runs_the_second_model_of_a_request(nets, x, tmp_path):
    """The app's path: RunRequest.against, a second model held by the workbench, edits per side."""
    from inspector.core.records.requests import AgainstRequest, ModelRequest, RunRequest
    from inspector.core.runspec import RunSpec
    from inspector.core.workbench import Workbench

    a, b = _checkpoints(nets, tmp_path, "fc2.weight")
    np.save(tmp_path / "x.npy", x.numpy())
    bench = Workbench()
    spec = RunSpec.make(["fc1", "act1", "fc2", "fc3"], "output,grad_output")
    request = RunRequest(ModelRequest(f"{nets}:Net", a), str(tmp_path / "x.npy"), "cpu", spec, run_id=3,
                         against=AgainstRequest(ModelRequest(f"{nets}:Net", b)), visible=("fc1",))
    outcome = bench.execute(request)
    diff = outcome.against
    assert diff.first_divergent == "fc2:output" and diff.first is outcome.result
    assert diff.second.target_index == outcome.result.target_index
    ref_a, cls = reference(load_model(f"{nets}:Net", a).module, x)
    ref_b, _ = reference(load_model(f"{nets}:Net", b).module, x, cls)
    assert diff.row("fc3:grad_output").rel_l2 == pytest.approx(numpy_divergence(ref_a["fc3:grad_output"],
                                                                                ref_b["fc3:grad_output"])[0], rel=1e-5)
    held = bench.second.loaded
    from dataclasses import replace

    edited = replace(request, spec=RunSpec.make(spec.layers, spec.sites, ["act1:output=zero()"]))
    diff = bench.execute(edited).against  # the edit on the first model only
    assert bench.second.loaded is held  # the second model is kept between runs
    assert diff.first_divergent == "act1:output"
    both = replace(edited, against=AgainstRequest(ModelRequest(f"{nets}:Net", b), edited.spec.edits))
    # zeroed on both: fc2's changed weights multiply zeros, so nothing diverges at all
    assert bench.execute(both).against.first_divergent is None
    assert bench.execute(replace(request, against=None)).against is None
    assert bench.second is None  # back to the baseline: the second model is let go
    wide = tmp_path / "wide.safetensors"
    save_file({k: v.contiguous() for k, v in load_model(f"{nets}:Wide", seed=1).module.state_dict().items()}, str(wide))
    with pytest.raises(ModelLoadError, match="second model.*wide.safetensors.*did not load.*a.safetensors"):
        bench.execute(replace(request, against=AgainstRequest(ModelRequest(f"{nets}:Net", str(wide)))))


def test_cli_against_model(nets, x, tmp_path, capsys):
    from inspector.cli import main

    np.save(tmp_path / "x.npy", x.numpy())
    args = ["diff", "--model", f"{nets}:Net", "--seed", "5", "--input", str(tmp_path / "x.npy"), "--layers", "all"]
    assert main([*args, "--against-model", f"{nets}:Net", "--against-seed", "5", "--json"]) == 0  # the same seed
    # (each side has its own seed: without --against-seed the second gets a new one, issue 25 item 2)
    found = json.loads(capsys.readouterr().out)
    assert found["first_divergent"] is None and all(r["rel_l2"] == 0 for r in found["rows"])
    assert main([*args, "--against-model", f"{nets}:Wide"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "different shapes" in err and ":Net" in err and ":Wide" in err


def test_a_load_failure_names_each_sides_default_weights_as_they_are(tmp_path):
    """An hf: folder's default weights are its own (pretrained), not 'random' as the message once said."""
    from inspector.core.compare.pair import load_pair

    with pytest.raises(ModelLoadError) as error:
        load_pair(f"hf:{tmp_path / 'no-such-folder'}", None, against_model="demo")
    message = str(error.value)
    assert f"hf:{tmp_path / 'no-such-folder'} (weights the folder's own, pretrained)" in message
    assert "demo (weights bundled)" in message and "random" not in message


def test_each_side_of_a_diff_has_its_own_seed(nets, x, tmp_path, capsys):
    """Issue 25, item 2: --against-model X --against-weights random was built with the first model's seed
    (rel_l2 0 everywhere, 'no forward capture diverges')."""
    from inspector.cli import main

    np.save(tmp_path / "x.npy", x.numpy())
    base = ["diff", "--model", f"{nets}:Net", "--seed", "1", "--against-model", f"{nets}:Net", "--against-weights",
            "random", "--input", str(tmp_path / "x.npy"), "--layers", "fc1,fc2,fc3", "--sites", "output", "--json"]
    assert main(base) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["seeds"]["first"] == 1 and found["seeds"]["second"] not in (None, 1)
    assert found["first_divergent"] == "fc1:output" and all(r["rel_l2"] > 0 for r in found["rows"])
    assert main([*base, "--against-seed", "1"]) == 0  # the same seed on purpose: the same weights
    same = json.loads(capsys.readouterr().out)
    assert same["seeds"] == {"first": 1, "second": 1} and same["first_divergent"] is None
    assert all(r["rel_l2"] == 0 for r in same["rows"])
    assert main([*base[:-1], "--against-seed", "7"]) == 0  # the table names both seeds
    table = capsys.readouterr().out
    assert "first model: weights as the factory made them, under seed 1 (--seed 1 makes them again)" in table
    assert "second model: weights as the factory made them, under seed 7 (--against-seed 7 makes them again)" in table
