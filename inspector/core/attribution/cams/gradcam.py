"""Grad-CAM (Selvaraju et al. 2017): a layer's maps weighted by the spatial mean of their gradient,
ReLU of the sum; at the layer `cams.layers` finds (the feature map the head reads) unless one is given, and
on an R-CNN at the FPN level its box pooler reads the box at.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ...detection.levels import level_of_box, pooled_levels
from ...common.errors import RunError, SpecError
from ...sources.layers import channel_layouts
from ...target.objective import parse_target
from ...records.tokens import TokenGrid, is_channels_last, token_maps
from ...engine.runner import RunSpec, run
from ...engine.result import RunResult
from ...sources.grids import token_grid
from ...sources.loaded import LoadedModel
from ..record import Attribution, _device, _unwrap, box_found, boxes_of
from .layers import auto_gradcam_layer, upsample


def cam_from_result(result: RunResult, layer: str, grid: TokenGrid | None = None,
                    channels_last: bool | None = None) -> np.ndarray:
    """Grad-CAM (h, w) from a run that captured `layer:output` and `layer:grad_output`:
    ReLU(sum_k alpha_k A^k), alpha_k the spatial mean of the gradient, first batch item. Token
    outputs (B, N, C) on the model's patch `grid` count as C maps of it (prefix tokens left out);
    a 4-D output is (B, H, W, C) where the model says `channels_last` of the layer (`is_channels_last`)."""
    acts, grads = result.captures.get(f"{layer}:output"), result.captures.get(f"{layer}:grad_output")
    if grid is not None and acts is not None and grads is not None and acts.array is not None \
            and grads.array is not None and (maps := token_maps(acts.array, grid)) is not None:
        a, g = torch.from_numpy(maps[None]).float(), torch.from_numpy(token_maps(grads.array, grid)[None]).float()
        alpha = g.mean(dim=(2, 3), keepdim=True)
        return torch.relu((alpha * a).sum(dim=1))[0].numpy()
    if acts is None or acts.array is None or acts.array.ndim != 4:
        shape = "nothing" if acts is None or acts.array is None else f"shape {acts.array.shape}"
        raise SpecError(f"Grad-CAM needs one (N, C, H, W) output at {layer}; it gives {shape}.")
    if grads is None or grads.array is None:
        raise RunError(f"No gradient reached {layer}; the objective ({result.target}) does not depend on it.")
    a, g = torch.from_numpy(acts.array[:1]).float(), torch.from_numpy(grads.array[:1]).float()
    if is_channels_last(tuple(acts.array.shape), channels_last):  # Swin's and ConvNeXt's (N, H, W, C) blocks
        a, g = a.permute(0, 3, 1, 2), g.permute(0, 3, 1, 2)
    alpha = g.mean(dim=(2, 3), keepdim=True)
    return torch.relu((alpha * a).sum(dim=1))[0].numpy()


def _channels_last_at(module: nn.Module, x: torch.Tensor, result: RunResult, layer: str) -> bool | None:
    """What the model says of the layout of `layer`'s 4-D output (`layers.channel_layouts`, once per model);
    None for other outputs."""
    acts = result.captures.get(f"{layer}:output")
    if acts is None or acts.array is None or acts.array.ndim != 4:
        return None
    return channel_layouts(module, x.detach().to(_device(module))).get(layer)


def gradcam(model: LoadedModel | nn.Module, x: torch.Tensor, target=None, layer: str | None = None) -> Attribution:
    """Grad-CAM at `layer` (default: `auto_gradcam_layer`, the feature map the head reads). Backward stops
    at that layer."""
    module, labels = _unwrap(model)
    if x.ndim != 4:
        raise SpecError(f"Grad-CAM needs an image input (N, C, H, W); got shape {tuple(x.shape)}.")
    grid = token_grid(module, tuple(x.shape[-2:]))
    notes = ()
    levels = pooled_levels(module) if layer is None else None
    if levels:  # an R-CNN: every level its box pooler reads, then the one it read the box at
        spec = RunSpec(tuple(levels), frozenset({"output", "grad_output"}), (), parse_target(target), stats=False)
        result = run(module, x, spec, labels)
        box_found(result.detections, result.target_detection)
        k = result.target_detection
        level = level_of_box(module, x, result.detections[k].box)
        layer = levels[-1 if level is None else level]
        notes = (f"Layer {layer}: the FPN level the box pooler reads box:{k} at (by its size)."
                 if level is not None else f"Layer {layer}: the last level (the box pooler maps none).",)
    else:
        if layer is None:
            layer, notes = auto_gradcam_layer(module, x)
        spec = RunSpec((layer,), frozenset({"output", "grad_output"}), (), parse_target(target), stats=False)
        result = run(module, x, spec, labels)
        box_found(result.detections, result.target_detection)
    cam = cam_from_result(result, layer, grid, _channels_last_at(module, x, result, layer))
    return Attribution("gradcam", upsample(cam, tuple(x.shape[-2:])), result.target, result.target_index,
                       layer, cam, warnings=tuple(result.warnings), notes=notes, **boxes_of(result))


def gradcam_map(model, x, target, layer, options) -> Attribution:
    return gradcam(model, x, target, layer)
