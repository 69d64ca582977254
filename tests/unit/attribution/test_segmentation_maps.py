"""Class-activation maps of a segmentation (torchvision's LR-ASPP, seeded random weights): by default at the
backbone's last feature map (the head's own output is the class map itself, whose Grad-CAM is only that map's
positive part), equal to Grad-CAM by hand (a forward hook and autograd); guided Grad-CAM of a `seg:` target is
guided backprop times that Grad-CAM of the same target."""

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
