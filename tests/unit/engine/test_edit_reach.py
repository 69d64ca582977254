"""An edit whose key never matches is an error before the run when the layer tree shows it, else one
warning after it; results and manifests list only the edits that were applied."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from torch import nn

from inspector.core import SpecError, capture, load_input, load_model
from inspector.core.engine.export import export_npz
from inspector.core.records.requests import ModelRequest, RunRequest
from inspector.core.runspec import RunSpec
from inspector.core.sources.loaded import LoadedModel
from inspector.core.workbench import Workbench


@pytest.fixture(scope="module")
def demo():
    return load_model("demo")


@pytest.fixture(scope="module")
def star(demo):
    return load_input("sample:star", demo.preprocess, demo.input_shape)


def _no_hooks(module: nn.Module) -> bool:
    return all(not m._forward_hooks and not m._forward_pre_hooks for m in module.modules())


@pytest.mark.parametrize("edit, words", [
    ("block.relu:output#5=zero()", "block.relu runs 2 times (#0 to #1) per forward pass, so #5 never happens."),
    ("conv1:output#1=zero()", "conv1 runs once per forward pass, so #1 never happens."),
    ("conv1:output[3]=zero()", "conv1 returns one tensor, so there is no [3]; write conv1:output."),
    ("conv1:grad_output[0]=zero()", "conv1 returns one tensor, so there is no [0]; write conv1:grad_output."),
    ("conv1.weight:grad#1=zero()", "a parameter gradient has no calls (#K) or parts ([i]); write conv1.weight:grad."),
])
def test_edits_that_can_never_match_are_errors_before_the_run(demo, star, edit, words):
    with pytest.raises(SpecError) as info:
        capture(demo, star, "fc", "output", edits=[edit])
    assert str(info.value) == f"Edit {edit}: {words}"
    assert _no_hooks(demo.module)


class Unused(nn.Module):
    """`spare` is never called; `pair` returns two tensors."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.spare = nn.Linear(3, 2)
        self.pair = Pair()

    def forward(self, x):
        a, b = self.pair(self.fc(x))
        return a + b


class Pair(nn.Module):
    def forward(self, x):
        return x * 2, x * 3


@pytest.fixture
def unused():
    torch.manual_seed(0)
    return LoadedModel(Unused().eval(), "test:Unused", input_shape=(1, 3))


def test_an_edit_on_a_module_that_never_runs_is_an_error(unused):
    x = torch.ones(1, 3)
    with pytest.raises(SpecError, match="Edit spare:output=zero\\(\\): spare never runs in a forward pass"):
        capture(unused, x, "fc", "output", edits=["spare:output=zero()"])
    with pytest.raises(SpecError, match=r"pair returns 2 tensors \(\[0\] to \[1\]\), so there is no \[2\]"):
        capture(unused, x, "fc", "output", edits=["pair:output[2]=zero()"])
    # [1] exists: applied, and it is the x * 3 part that is zeroed
    result = capture(unused, x, "fc", "output", edits=["pair:output[1]=zero()"], target="sum")
    fc = result["fc:output"]
    np.testing.assert_allclose(result["output"], fc * 2, rtol=1e-6)
    assert result.edits == ["pair:output[1]=zero()"] and result.warnings == []


def test_the_workbench_checks_too(demo):
    spec = RunSpec.make(["fc"], "output", ["block.relu:output#5=zero()"])
    request = RunRequest(ModelRequest("demo"), "sample:star", "cpu", spec)
    with pytest.raises(SpecError, match="#5 never happens"):
        Workbench().execute(request)


def test_an_edit_only_the_run_shows_unmatched_is_a_warning_and_not_listed(demo, star, tmp_path):
    # conv1 takes one input: there is no conv1:input[3], which the layer tree does not record
    # and fc.bias:grad is not captured (no params site), so it is not edited either
    edits = ["conv1:input[3]=zero()", "fc:output=scale(2)", "fc.bias:grad=zero()"]
    result = capture(demo, star, "fc", "output", edits=edits)
    plain = capture(demo, star, "fc", "output")
    np.testing.assert_array_equal(result["fc:output"], plain["fc:output"] * 2)
    assert result.edits == ["fc:output=scale(k=2)"]  # the only one applied
    assert result.warnings == [
        "2 edit(s) not applied: nothing they name was reached in this run (a parameter gradient is edited only "
        "where params are captured): conv1:input[3]=zero(), fc.bias:grad=zero()."]
    _, sidecar = export_npz(result, tmp_path / "r.npz", {"model": "demo"})
    assert json.loads(sidecar.read_text())["edits"] == ["fc:output=scale(k=2)"]


def test_a_gradient_edit_no_gradient_reaches_is_a_warning(demo, star):
    # only fc's output is captured: no gradient site, so no backward runs and the edit cannot apply
    result = capture(demo, star, "fc", "output", edits=["conv1:grad_output=zero()"])
    assert result.edits == [] and "conv1:grad_output=zero()" in result.warnings[0]


class SpareRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.act = nn.ReLU()
        self.spare = nn.ReLU()  # never called

    def forward(self, x):
        return self.act(self.fc(x))


def test_the_guided_preset_names_only_relus_that_run():
    from inspector.core.edits.presets import guided_backprop
    from inspector.core.sources.layers import build_layer_tree
    from inspector.core.model_info import describe

    torch.manual_seed(0)
    loaded = LoadedModel(SpareRelu().eval(), "test:SpareRelu", input_shape=(1, 3))
    info = describe(loaded, build_layer_tree(loaded.module, torch.zeros(1, 3)), ModelRequest("test:SpareRelu"))
    assert "spare" not in info.layer_types and info.layer_types["act"] == "ReLU"
    edits = guided_backprop(info.layer_types, info.parameter_names, "", 1.0)
    assert [str(e) for e in edits] == ["act:grad_input=guided()"]
    result = capture(loaded, torch.ones(1, 3), "fc", "grad_output", edits=edits, target="sum")
    assert result.edits == ["act:grad_input=guided()"] and result.warnings == []
