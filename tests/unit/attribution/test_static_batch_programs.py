"""Issue 40, item 6: a `.pt2` program exported with torch.export's default static batch takes batch 1 only, so the
methods that run many copies of the input in one pass (integrated gradients' path points and its first forward of
x and the baseline, SmoothGrad's noisy copies, occlusion's occluded copies, the deletion and insertion images,
D-RISE's masked images) run its copies one at a time; a program exported with a dynamic batch (torch.export.Dim) still runs them in batches.
Every map is checked against the same method on the eager module the program was exported from."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from inspector.core import attribute, load_model
from inspector.core.attribution import attribute as attribute_module
from inspector.core.sources.loaded import LoadedModel

SIDE = 32  # the small net's input side; the demo's is 64
METHODS = {
    "ig": {"steps": 6},
    "smoothgrad": {"samples": 5, "noise": 0.1, "seed": 3},
    "occlusion": {"window": 8, "stride": 4},
}


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.body = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(), nn.Conv2d(6, 6, 3, padding=1),
                                  nn.GELU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 4))

    def forward(self, x):
        return self.body(x)


def export(module: nn.Module, side: int, path, dynamic=None) -> LoadedModel:
    """`module` exported at batch 1 with a static batch (or at batch 2 with `dynamic`'s: a dynamic batch exported
    at 1 is specialized to 1), saved and loaded as the CLI does."""
    example = torch.rand(1 if dynamic is None else 2, 3, side, side)
    program = torch.export.export(module, (example,), dynamic_shapes=dynamic)
    torch.export.save(program, str(path))
    return load_model(str(path), trust=True)


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    """{name: (eager LoadedModel, the program exported from it with a static batch, input)}."""
    folder = tmp_path_factory.mktemp("programs")
    demo = load_model("demo").module.eval()
    found = {}
    for name, module, side in (("tiny", Tiny().eval(), SIDE), ("demo", demo, 64)):
        x = torch.rand(1, 3, side, side, generator=torch.Generator().manual_seed(1))
        found[name] = (LoadedModel(module, name), export(module, side, folder / f"{name}.pt2"), x)
    return found


def details(found) -> dict:
    return dict(found.details)


def same_map(found, expected) -> None:
    """The same map to float32 rounding: occlusion's drops are differences of scores (near 1) as small as 1e-5,
    rounded to 1e-8 or so; a map off by its own size, or run with another class, is far outside."""
    np.testing.assert_allclose(found.map, expected.map, rtol=1e-4, atol=1e-4 * float(np.abs(expected.map).max()))


@pytest.mark.parametrize("net", ["tiny", "demo"])
@pytest.mark.parametrize("method", list(METHODS))
def test_a_static_batch_program_runs_its_copies_one_at_a_time(programs, net, method):
    eager, program, x = programs[net]
    found = attribute(program, x, method, options=METHODS[method])
    expected = attribute(eager, x, method, options=METHODS[method])
    assert program.most_batch == 1 and eager.most_batch is None  # found once, when the program was loaded
    assert any("static batch of 1" in note for note in program.notes)
    assert found.target_index == expected.target_index
    same_map(found, expected)
    if "batch" in details(expected):
        assert details(expected)["batch"] > 1  # the eager module's copies ran together
        assert details(found)["batch"] == 1


def test_a_batch_asked_for_by_hand_is_one_for_a_static_batch_program(programs):
    eager, program, x = programs["tiny"]
    found = attribute(program, x, "ig", options={"steps": 6, "batch": 4})
    expected = attribute(eager, x, "ig", options={"steps": 6, "batch": 4})
    assert details(found)["batch"] == 1 and details(expected)["batch"] == 4
    same_map(found, expected)
    assert found.completeness_gap == pytest.approx(expected.completeness_gap, rel=1e-3, abs=1e-6)


@pytest.mark.parametrize("method", ["ig", "occlusion"])
def test_a_programs_own_module_given_as_a_bare_module_runs_its_copies_one_at_a_time(method):
    """`ExportedProgram.module()` (a GraphModule that guards its batch, not the unflattened module the loader
    makes), passed to the attribution API as it is."""
    module = Tiny().eval()
    program = torch.export.export(module, (torch.rand(1, 3, SIDE, SIDE),)).module()
    x = torch.rand(1, 3, SIDE, SIDE, generator=torch.Generator().manual_seed(5))
    options = METHODS[method]
    found, expected = attribute_module(program, x, method, options=options), attribute_module(module, x, method,
                                                                                              options=options)
    assert details(found)["batch"] == 1 and details(expected)["batch"] > 1
    same_map(found, expected)


@pytest.mark.parametrize("net", ["tiny", "demo"])
def test_the_metrics_score_a_static_batch_programs_map(programs, net):
    eager, program, x = programs[net]
    found = attribute(program, x, "saliency", metrics=("deletion", "insertion"), metric_steps=6)
    expected = attribute(eager, x, "saliency", metrics=("deletion", "insertion"), metric_steps=6)
    assert [c.metric for c in found.curves] == ["deletion", "insertion"]
    for ours, theirs in zip(found.curves, expected.curves):
        assert len(ours.scores) == 7
        np.testing.assert_allclose(ours.scores, theirs.scores, rtol=1e-5, atol=1e-7)
        assert ours.auc == pytest.approx(theirs.auc, rel=1e-5)


@pytest.mark.parametrize("most", [None, 3])
def test_a_program_exported_with_a_dynamic_batch_still_runs_copies_in_batches(tmp_path, most):
    module = Tiny().eval()
    batch = torch.export.Dim("batch") if most is None else torch.export.Dim("batch", min=1, max=most)
    program = export(module, SIDE, tmp_path / "dynamic.pt2", dynamic=({0: batch},))
    x = torch.rand(1, 3, SIDE, SIDE, generator=torch.Generator().manual_seed(2))
    found = attribute(program, x, "ig", options={"steps": 6})
    assert program.most_batch == most
    expected = attribute(LoadedModel(module, "tiny"), x, "ig", options={"steps": 6})
    assert details(found)["batch"] == (details(expected)["batch"] if most is None else most)
    assert details(found)["batch"] > 1
    same_map(found, expected)


class Boxes(nn.Module):
    """A detector in torchvision's form: one box per image, scored by the mean of the image's top-left quarter."""

    def forward(self, x):
        found = []
        for image in x:
            score = torch.sigmoid(4 * image[:, :8, :8].mean() - 1).reshape(1)
            found.append({"boxes": torch.tensor([[0.0, 0.0, 8.0, 8.0]]), "scores": score,
                          "labels": torch.ones(1, dtype=torch.int64)})
        return found


def test_drise_runs_a_static_batch_detectors_masks_one_at_a_time(tmp_path):
    module = Boxes().eval()
    program = export(module, 16, tmp_path / "boxes.pt2")
    x = torch.rand(1, 3, 16, 16, generator=torch.Generator().manual_seed(0))
    options = {"masks": 12, "cell": 4, "seed": 1}
    found, expected = attribute(program, x, "drise", options=options), attribute_module(module, x, "drise",
                                                                                        options=options)
    assert details(found)["batch"] == 1 and details(expected)["batch"] > 1
    assert float(np.abs(expected.cam).max()) > 0
    np.testing.assert_allclose(found.cam, expected.cam, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(found.map, expected.map, rtol=1e-4, atol=1e-6)
