"""Where a class activation map looks, and how its map comes to the input's size: the last conv-like layer,
the feature map a classifier's head reads, a transformer's last block's first norm, a detector's class tower
or backbone (`auto_gradcam_layer` picks one per model and input shape, once), and `upsample`. Shared by
Grad-CAM and guided Grad-CAM (`attribution`) and EigenCAM (`eigencam`)."""

from __future__ import annotations

import weakref
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ...common.errors import SpecError
from ...sources.layers import LayerTree, build_layer_tree, in_backbone
from ...records.tokens import TokenGrid, is_channels_last
from ...engine.runner import RunSpec, run
from ...sources.grids import token_grid
from ..record import _device


def _is_patchify(module: nn.Module | None) -> bool:
    """A non-overlapping patch embedding (ViT's conv_proj): kernel == stride > 1."""
    kernel, stride = getattr(module, "kernel_size", None), getattr(module, "stride", None)
    if kernel is None or stride is None:
        return False
    k, st = np.atleast_1d(kernel), np.atleast_1d(stride)
    return k.shape == st.shape and bool((k == st).all()) and int(np.prod(k)) > 1


def find_gradcam_layer(tree: LayerTree, order: Sequence[str] | None = None, model: nn.Module | None = None) -> str:
    """The last conv-like leaf with a 4-D output (tree built with an example input).

    `order` (paths in forward order) overrides model order; with `model`, patch
    embeddings (kernel == stride) alone do not count: Grad-CAM there shows no class evidence.
    """
    spatial = [l for l in tree if l.path and l.calls and l.output_shapes and len(l.output_shapes[0]) == 4]
    convs = [l.path for l in spatial if l.is_conv]
    if order is not None:
        rank = {p: i for i, p in enumerate(order)}
        convs.sort(key=lambda p: rank.get(p, -1))
    modules = dict(model.named_modules()) if model is not None else {}
    if convs and not all(_is_patchify(modules.get(p)) for p in convs):
        return convs[-1]
    names = [l.path + (" (patch embedding)" if _is_patchify(modules.get(l.path)) else "") for l in spatial]
    shown = ", ".join(names[-8:]) or "none"
    what = "only a patch embedding" if convs else "no conv layer"
    raise SpecError(f"Grad-CAM needs a conv-like layer with an (N, C, H, W) output; this model has {what}. "
                    f"Layers with a 4-D output: {shown}. Pass one as the layer, or use saliency or guided.")


def find_head_layer(tree: LayerTree, order: Sequence[str], model: nn.Module | None = None) -> str | None:
    """The feature map the head reads: the module (a container too) whose (N, C, H, W) output, more than
    one pixel, was finished last in the forward pass (`order`), after the last convolution; a patch
    embedding never counts. resnet18: `layer4` (not `layer4.1.conv2`, before its BatchNorm and the
    residual); densenet121: `features`; convnext_tiny: `features`; as pytorch-grad-cam's and captum's
    users pass them. None when nothing is (the last convolution then serves)."""
    shapes = {l.path: l.output_shapes[0] for l in tree if l.path and l.output_shapes}
    said = tree.layouts()
    convs = set(tree.convolutions())
    modules = dict(model.named_modules()) if model is not None else {}
    last_conv = max((i for i, p in enumerate(order) if p in convs), default=None)
    if last_conv is None:
        return None
    found = None
    for path in order[last_conv:]:
        shape = shapes.get(path, ())
        if len(shape) != 4 or _is_patchify(modules.get(path)):
            continue
        height, width = (shape[1], shape[2]) if is_channels_last(tuple(shape), said.get(path)) else (shape[2], shape[3])
        if height * width > 1:
            found = path
    return found


def detector_gradcam_layer(tree: LayerTree, order: Sequence[str], model: nn.Module | None = None) -> str | None:
    """Where Grad-CAM of a box looks on a detector: its class head's conv tower (`head.classification_head.conv`)
    where it runs once, on one feature map (the demo detector), else its backbone's last feature map: the module
    under `backbone.`, not its FPN, that finished last with one (N, C, H, W) tensor of more than one pixel
    (torchvision's `backbone.body` gives a dict of levels; resnet50 FPN: `backbone.body.layer4`; transformers' DETR
    family: under `model.backbone.`). None for a
    model with neither. Grad-CAM's channel weights are means over the whole map: at the backbone they also
    light up other objects with the box's features (the pointing game on the demo detector: 54% of pairs at
    its FPN output, 88% at its class tower)."""
    shapes = {l.path: l.output_shapes[0] for l in tree if len(l.output_shapes) == 1}
    once = {l.path for l in tree if l.calls == 1}
    modules = dict(model.named_modules()) if model is not None else {}
    tower = [p for p in order if p.endswith("classification_head.conv") and p in once]
    for path in tower + list(reversed([p for p in order if in_backbone(p)])):
        shape = shapes.get(path, ())
        if len(shape) == 4 and shape[2] * shape[3] > 1 and not _is_patchify(modules.get(path)):
            return path
    return None


#: The automatic Grad-CAM layer of a model for an input shape, worked out once (two passes otherwise every call).
_AUTO_LAYERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def auto_gradcam_layer(module: nn.Module, x: torch.Tensor) -> tuple[str, tuple[str, ...]]:
    """(the layer Grad-CAM uses when none is given, notes saying why), for this model and x's shape."""
    key = tuple(x.shape)
    known = _AUTO_LAYERS.setdefault(module, {})
    if key in known:
        return known[key]
    example = x.detach().to(_device(module))
    grid = token_grid(module, tuple(x.shape[-2:]))
    tree = build_layer_tree(module, example)
    if grid is not None:
        layer = find_token_gradcam_layer(tree, grid)
        notes = (f"Layer {layer}: the last transformer block's first norm, its tokens on the "
                 f"{grid.describe()}.",)
    else:
        convs = tree.convolutions()
        order = _forward_order(module, example, [l.path for l in tree if l.path and l.calls]) if convs else None
        last_conv = find_gradcam_layer(tree, [p for p in order if p in set(convs)] if order else None, module)
        segments = _segments(tree)
        if (tree.detects or segments) and (layer := detector_gradcam_layer(tree, order or [], module)) is not None:
            notes = ((f"Layer {layer}: the class head's feature map (one level).",)
                     if layer.endswith("classification_head.conv") else
                     (f"Layer {layer}: the backbone's last feature map (the segmentation head reads it; its own "
                      f"output is the class map itself).",) if segments else
                     (f"Layer {layer}: the backbone's last feature map (the detector reads its boxes from "
                      f"it, through its FPN where it has one).",))
        else:
            layer = find_head_layer(tree, order, module) or last_conv
            notes = (f"Layer {layer}: the feature map the head reads (the last convolution is "
                     f"{last_conv}).",) if layer != last_conv else ()
    known[key] = (layer, notes)
    return layer, notes


def _segments(tree: LayerTree) -> bool:
    """The model answers with a class map (B, classes, H, W): a segmentation, whose head's output is the map
    Grad-CAM would explain (the backbone's last feature map serves, as pytorch-grad-cam's segmentation tutorial
    takes `backbone.layer4`)."""
    root = tree.layers[0].output_shapes if tree.layers and not tree.layers[0].path else ()
    return bool(root) and len(root[0]) == 4 and root[0][1] > 1


def find_token_gradcam_layer(tree: LayerTree, grid: TokenGrid) -> str:
    """For a transformer: the last block's first norm, as commonly done (a block is the deepest
    module holding two or more norms whose token outputs fit the patch grid; the final norm after
    all blocks is alone in its parent, so it does not count)."""
    norms = [l for l in tree if l.path and l.calls and "Norm" in l.type_name and l.output_shapes
             and len(l.output_shapes[0]) == 3 and grid.fits(l.output_shapes[0][1])]
    blocks: dict[str, list[str]] = {}
    for norm in norms:
        blocks.setdefault(norm.path.rpartition(".")[0], []).append(norm.path)
    in_blocks = [paths for paths in blocks.values() if len(paths) >= 2]
    if not in_blocks:
        raise SpecError("Grad-CAM on this transformer needs a layer: no block with norms on the "
                        f"{grid.describe()} was found. Pass one as the layer, or use saliency.")
    return in_blocks[-1][0]


def _forward_order(module: nn.Module, x: torch.Tensor, paths: list[str]) -> list[str]:
    """Paths in the order their forward finished (one no-grad engine run, nothing copied)."""
    spec = RunSpec(tuple(paths), frozenset({"output"}), keep="stats", stats=False)
    return [c.key.layer for c in run(module, x, spec).captures.values()]


def upsample(cam: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Bilinear resize to `size`, then scaled to [0, 1] (all zeros when the map is flat)."""
    up = F.interpolate(torch.from_numpy(cam)[None, None].float(), size=tuple(size), mode="bilinear",
                       align_corners=False)[0, 0]
    lo, hi = up.min(), up.max()
    return ((up - lo) / (hi - lo) if hi > lo else torch.zeros_like(up)).numpy()
