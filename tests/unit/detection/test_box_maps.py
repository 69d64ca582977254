"""Maps for one detection: Grad-CAM of a box's score against an independent computation (plain hooks and
`scores[k].backward()`), the detector's automatic layer, and EigenCAM against numpy's SVD."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from inspector.bench.detection import plain_gradcam
from inspector.core.attribution import attribute
from inspector.core.attribution.cams.layers import auto_gradcam_layer


def _by_hand_gradcam(module, x, layer, k):
    """Grad-CAM of detection k's score at `layer`, with nothing but a forward hook and autograd (the bench's
    baseline), and upsampled here."""
    cam = plain_gradcam(module, x, layer, k)
    up = F.interpolate(cam[None, None], size=tuple(x.shape[-2:]), mode="bilinear", align_corners=False)[0, 0]
    return cam.numpy(), ((up - up.min()) / (up.max() - up.min())).numpy()


@pytest.fixture(scope="module")
def faster_rcnn():
    from inspector.core import load_model

    return load_model("fasterrcnn_mobilenet_v3_large_320_fpn", seed=0)


@pytest.mark.parametrize("k", [0, 7])
def test_gradcam_of_a_box_equals_a_by_hand_computation_at_the_backbones_last_map(faster_rcnn, k):
    x = torch.rand(1, 3, 120, 160, generator=torch.Generator().manual_seed(3))
    layer, notes = auto_gradcam_layer(faster_rcnn.module, x)
    assert layer == "backbone.body.16" and "the backbone's last feature map" in notes[0]  # not the RPN or heads
    found = attribute(faster_rcnn, x, "gradcam", f"box:{k}", layer=layer)
    cam, upsampled = _by_hand_gradcam(faster_rcnn.module, x, layer, k)
    assert found.target == f"box:{k}" and found.layer == layer and found.map.shape == (120, 160)
    np.testing.assert_allclose(found.cam, cam, rtol=1e-4, atol=1e-12)
    np.testing.assert_allclose(found.map, upsampled, rtol=1e-4, atol=1e-5)
    # by default, an R-CNN's box is explained at the FPN level its pooler reads it at (test_fpn_level.py)
    level = attribute(faster_rcnn, x, "gradcam", f"box:{k}")
    assert level.layer.startswith("backbone.fpn.layer_blocks.")
    cam, upsampled = _by_hand_gradcam(faster_rcnn.module, x, level.layer, k)
    np.testing.assert_allclose(level.cam, cam, rtol=1e-4, atol=1e-12)


def test_saliency_and_guided_backprop_take_a_box_target(faster_rcnn):
    x = torch.rand(1, 3, 96, 128, generator=torch.Generator().manual_seed(4))
    found = attribute(faster_rcnn, x, "saliency", "box:2")
    xx = x.clone().requires_grad_(True)
    first = faster_rcnn.module([xx[0]])[0]
    order = torch.argsort(first["scores"].detach(), descending=True, stable=True)
    first["scores"][order[2]].backward()
    np.testing.assert_allclose(found.map, xx.grad[0].abs().amax(dim=0).numpy(), rtol=1e-4, atol=1e-12)
    guided = attribute(faster_rcnn, x, "guided", "box:2")
    assert guided.target == "box:2" and guided.map.shape == (3, 96, 128) and np.abs(guided.map).max() > 0


def test_eigencam_is_the_first_principal_component_of_the_layers_activations():
    from inspector.core import load_model

    loaded = load_model("demo")
    x = torch.rand(1, 3, 64, 64, generator=torch.Generator().manual_seed(5))
    kept = {}
    handle = loaded.module.get_submodule("block").register_forward_hook(lambda _m, _i, o: kept.__setitem__("a", o))
    with torch.no_grad():
        loaded.module(x)
    handle.remove()
    acts = kept["a"][0].double().numpy()  # (C, H, W)
    c, h, w = acts.shape
    flat = acts.reshape(c, h * w).T
    centred = flat - flat.mean(axis=0)
    _u, _s, vt = np.linalg.svd(centred, full_matrices=False)
    projection = centred @ vt[0]
    if np.corrcoef(projection, flat.mean(axis=1))[0, 1] < 0:  # the sign where the layer fires is bright
        projection = -projection
    expected = np.maximum(projection, 0).reshape(h, w)
    found = attribute(loaded, x, "eigencam", layer="block")
    assert found.method == "eigencam" and found.target == "no class (class-agnostic)" and found.layer == "block"
    np.testing.assert_allclose(found.cam, expected, rtol=1e-4, atol=1e-6)
    assert found.map.shape == (64, 64) and found.map.max() == pytest.approx(1.0)
