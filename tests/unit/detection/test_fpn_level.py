"""Grad-CAM of an R-CNN's box looks at the FPN level its box pooler reads that box at: the level the FPN paper's
rule (eq. 1) gives for the box's size in the resized image, worked out here, and the only level the box score's
gradient reaches (checked on plain PyTorch hooks)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from inspector.core import load_input, load_model
from inspector.core.attribution import attribute
from inspector.core.detection.levels import pooled_levels

MODEL = "fasterrcnn_mobilenet_v3_large_320_fpn"


@pytest.fixture(scope="module")
def rcnn():
    loaded = load_model(MODEL, seed=0)
    return loaded, load_input("sample:scene_four_shapes", loaded.preprocess, loaded.input_shape)


def _level_by_hand(module, x, box) -> int:
    """Eq. 1 of the FPN paper as torchvision's pooler applies it: on the box in the resized image."""
    pooler = module.roi_heads.box_roi_pool
    k_min, k_max = (round(-math.log2(s)) for s in (pooler.scales[0], pooler.scales[-1]))
    images, _ = module.transform([x[0]])
    (rh, rw), (h, w) = images.image_sizes[0], x.shape[-2:]
    area = (box[2] - box[0]) * rw / w * (box[3] - box[1]) * rh / h
    level = math.floor(4 + math.log2(math.sqrt(area) / 224) + 1e-6)
    return min(max(level, k_min), k_max) - k_min


def test_gradcam_of_a_box_reads_the_level_its_pooler_reads(rcnn):
    loaded, x = rcnn
    module = loaded.module
    levels = pooled_levels(module)
    assert levels == ["backbone.fpn.layer_blocks.0", "backbone.fpn.layer_blocks.1"]
    seen = set()
    for k in range(6):
        found = attribute(loaded, x, "gradcam", f"box:{k}")
        expected = levels[_level_by_hand(module, x, found.detections[k].box)]
        assert found.layer == expected and f"box:{k}" in found.notes[0], (k, found.layer)
        seen.add(found.layer)
        grads = {}  # plain hooks: the box score's gradient at each level
        handles = [dict(module.named_modules())[p].register_full_backward_hook(
            lambda _m, _gi, go, p=p: grads.__setitem__(p, go[0].detach().abs().sum().item())) for p in levels]
        try:
            module.zero_grad()
            out = module([x[0].clone().requires_grad_(True)])
            order = torch.argsort(out[0]["scores"], descending=True, stable=True)
            out[0]["scores"][order[k]].backward()
        finally:
            for h in handles:
                h.remove()
        assert grads[expected] > 0 and all(v == 0 for p, v in grads.items() if p != expected), (k, grads)
        assert np.isfinite(found.map).all()
    assert seen  # the boxes' levels, as the model read them


def test_a_layer_given_is_kept(rcnn):
    loaded, x = rcnn
    found = attribute(loaded, x, "gradcam", "box:0", layer="backbone.fpn.layer_blocks.1")
    assert found.layer == "backbone.fpn.layer_blocks.1"
