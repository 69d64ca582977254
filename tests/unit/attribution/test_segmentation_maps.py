"""Maps of a segmentation's seg: target (torchvision's LR-ASPP, seeded random weights). Grad-CAM by default at the
backbone's last feature map (the head's own output is the class map itself, whose Grad-CAM is only that map's
positive part), equal to Grad-CAM by hand (a forward hook and autograd); guided Grad-CAM of a `seg:` target is
guided backprop times that Grad-CAM of the same target; integrated gradients and occlusion of it equal captum's
with the box's score as the forward function."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from inspector.core import load_model
from inspector.core.attribution.entry import attribute

TARGET = "seg:15@8,16,56,48"


@pytest.fixture(scope="module")
def lraspp():
    return load_model("lraspp_mobilenet_v3_large", seed=5)


def _x() -> torch.Tensor:
    return torch.rand(1, 3, 64, 64, generator=torch.Generator().manual_seed(2))


def _gradcam_by_hand(module, x, layer: str) -> torch.Tensor:
    kept = {}
    handle = module.get_submodule(layer).register_forward_hook(lambda _m, _i, out: kept.__setitem__("a", out))
    try:
        logits = module(x)["out"]
    finally:
        handle.remove()
    (grad,) = torch.autograd.grad(logits[0, 15, 16:48, 8:56].sum(), kept["a"])
    return torch.relu((grad.mean(dim=(2, 3), keepdim=True) * kept["a"]).sum(dim=1))[0].detach()


@pytest.mark.numeric
def test_gradcam_of_a_segmentation_looks_at_the_backbones_last_map_by_hand(lraspp):
    found = attribute(lraspp, _x(), "gradcam", TARGET)
    assert found.layer == "backbone.16" and "the segmentation head reads it" in found.notes[0]
    expected = _gradcam_by_hand(lraspp.module, _x(), "backbone.16")
    assert expected.shape == (4, 4) and expected.max() > 0
    np.testing.assert_allclose(found.cam, expected.numpy(), rtol=1e-4, atol=1e-12)
    up = F.interpolate(expected[None, None], size=(64, 64), mode="bilinear", align_corners=False)[0, 0]
    np.testing.assert_allclose(found.map, ((up - up.min()) / (up.max() - up.min())).numpy(), atol=1e-5)


def test_guided_gradcam_of_a_seg_target_is_guided_backprop_times_its_gradcam(lraspp):
    found = attribute(lraspp, _x(), "guided-gradcam", TARGET)
    guided = attribute(lraspp, _x(), "guided", TARGET)
    cam = attribute(lraspp, _x(), "gradcam", TARGET)
    assert found.target == TARGET and found.layer == "backbone.16" and np.abs(found.map).max() > 0
    np.testing.assert_allclose(found.map, guided.map * cam.map[None], rtol=1e-5, atol=1e-12)


class _BoxScore(torch.nn.Module):
    """The seg: target's score of each image in a batch, (B, 1): class 15's logits summed in the box (captum's
    forward function)."""

    def __init__(self, module):
        super().__init__()
        self.module = module

    def forward(self, x):
        return self.module(x)["out"][:, 15, 16:48, 8:56].sum(dim=(1, 2))[:, None]


@pytest.mark.numeric
def test_integrated_gradients_of_a_seg_target_equal_captums(lraspp):
    captum = pytest.importorskip("captum.attr")
    x = _x()
    found = attribute(lraspp, x, "ig", TARGET, options={"steps": 4, "quadrature": "riemann_trapezoid", "batch": 2})
    reference, delta = captum.IntegratedGradients(_BoxScore(lraspp.module)).attribute(
        x, target=0, n_steps=4, method="riemann_trapezoid", internal_batch_size=2, return_convergence_delta=True)
    assert found.target == TARGET and np.abs(found.map).max() > 0
    np.testing.assert_allclose(found.map, reference[0].detach().numpy(), rtol=1e-4, atol=1e-7)
    assert found.completeness_gap == pytest.approx(abs(float(delta)), rel=1e-3, abs=1e-6)


@pytest.mark.numeric
def test_occlusion_of_a_seg_target_equals_captums(lraspp):
    captum = pytest.importorskip("captum.attr")
    x = _x()
    found = attribute(lraspp, x, "occlusion", TARGET, options={"window": 32, "stride": 16})
    with torch.no_grad():
        reference = captum.Occlusion(_BoxScore(lraspp.module)).attribute(
            x, sliding_window_shapes=(3, 32, 32), strides=(3, 16, 16), target=0, baselines=0)
    assert found.target == TARGET and dict(found.details)["windows"] == 9 and np.abs(found.map).max() > 0
    np.testing.assert_allclose(found.map, reference[0].numpy(), rtol=1e-4, atol=1e-6)
