"""The FPN level an R-CNN reads a box at: Faster, Mask and Keypoint R-CNN pool each box's features from one
level of their feature pyramid, picked by the box's size (the FPN paper's eq. 1: level floor(4 + log2(sqrt(area)
/ 224)), clamped to the levels there are), on the box in the resized image the model works on. Grad-CAM of a box
looks there by default: the only level its score's gradient reaches through the box head.
"""

from __future__ import annotations

import torch
from torch import nn


def _pooler(module: nn.Module):
    return getattr(getattr(module, "roi_heads", None), "box_roi_pool", None)


def pooled_levels(module: nn.Module) -> list[str] | None:
    """The FPN output modules the box pooler reads, level by level (`backbone.fpn.layer_blocks.I`), None for a
    model without a pooler over an FPN (RetinaNet, FCOS and SSD read every level in their heads)."""
    pooler, fpn = _pooler(module), getattr(getattr(module, "backbone", None), "fpn", None)
    names, blocks = getattr(pooler, "featmap_names", None), getattr(fpn, "layer_blocks", None)
    if not names or blocks is None or not all(str(n).isdigit() or n == "pool" for n in names):
        return None
    # the pooler reads the names the FPN gives (the mobilenet models name four and give two: "0" and "1")
    return [f"backbone.fpn.layer_blocks.{int(n)}" for n in names if str(n).isdigit() and int(n) < len(blocks)] or None


def level_of_box(module: nn.Module, x: torch.Tensor, box) -> int | None:
    """The index (into `pooled_levels`) of the level the pooler reads `box` (input pixels of image x (1, C, H,
    W)) at, by the pooler's own rule; None before the model has run once (the pooler learns its levels then)."""
    pooler = _pooler(module)
    mapper = getattr(pooler, "map_levels", None)
    if mapper is None:
        return None
    with torch.no_grad():
        images, _ = module.transform([x[0]])
    (resized_h, resized_w), (h, w) = images.image_sizes[0], x.shape[-2:]
    sx, sy = resized_w / w, resized_h / h
    resized = torch.tensor([[box[0] * sx, box[1] * sy, box[2] * sx, box[3] * sy]], dtype=torch.float32,
                           device=x.device)
    return int(mapper([resized])[0])
