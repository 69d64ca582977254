"""EigenCAM (Muhammad & Yeasin 2020): a layer's activations projected on their first principal component,
with no gradient and no class: the usual map for detectors, whose heads often give no usable gradient.

As pytorch-grad-cam's `get_2d_projection`: the (H*W, C) activations centred per channel, their first right
singular vector, the projection back on the (H, W) grid. A singular vector's sign is arbitrary; here it is
the one whose projection rises with the activations' channel mean (where the layer fires is bright), then
negative values are cut, as every CAM does.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ...common.errors import SpecError
from ...sources.layers import channel_layouts
from ...records.tokens import is_channels_last, token_maps
from ...engine.runner import RunSpec, run
from ...sources.grids import token_grid
from ...sources.loaded import LoadedModel
from ..record import Attribution, _device, _unwrap
from .layers import auto_gradcam_layer, upsample


def principal_map(activations: np.ndarray) -> np.ndarray:
    """(C, H, W) activations -> (H, W) map: the first principal component's projection, >= 0."""
    c, h, w = activations.shape
    flat = torch.from_numpy(np.nan_to_num(activations.reshape(c, h * w).T)).double()  # (H*W, C)
    centred = flat - flat.mean(dim=0, keepdim=True)
    if not bool(centred.abs().max() > 0):
        return np.zeros((h, w), np.float32)
    _u, _s, vt = torch.linalg.svd(centred, full_matrices=False)
    projection = centred @ vt[0]
    mean = flat.mean(dim=1)
    if float(((mean - mean.mean()) * projection).sum()) < 0:
        projection = -projection
    return projection.clamp(min=0).reshape(h, w).float().numpy()


def eigencam(model: LoadedModel | nn.Module, x: torch.Tensor, layer: str | None = None) -> Attribution:
    """EigenCAM (`principal_map`) at `layer` (default: Grad-CAM's, `auto_gradcam_layer`): forward only,
    class-agnostic."""
    module, labels = _unwrap(model)
    if x.ndim != 4:
        raise SpecError(f"EigenCAM needs an image input (N, C, H, W); got shape {tuple(x.shape)}.")
    notes = ()
    if layer is None:
        layer, notes = auto_gradcam_layer(module, x)
    result = run(module, x, RunSpec((layer,), frozenset({"output"}), stats=False), labels)
    acts = result.captures.get(f"{layer}:output")
    grid = token_grid(module, tuple(x.shape[-2:]))
    maps = token_maps(acts.array, grid) if acts is not None and acts.array is not None and grid is not None else None
    if maps is None:
        if acts is None or acts.array is None or acts.array.ndim != 4:
            shape = "nothing" if acts is None or acts.array is None else f"shape {acts.array.shape}"
            raise SpecError(f"EigenCAM needs one (N, C, H, W) output at {layer}; it gives {shape}.")
        maps = acts.array[0]
        said = channel_layouts(module, x.detach().to(_device(module))).get(layer)  # the model's word, once
        if is_channels_last(tuple(acts.array.shape), said):
            maps = maps.transpose(2, 0, 1)
    cam = principal_map(np.asarray(maps, dtype=np.float32))
    return Attribution("eigencam", upsample(cam, tuple(x.shape[-2:])), "no class (class-agnostic)", None, layer, cam,
                       warnings=tuple(result.warnings), notes=notes,
                       detections=None if result.detections is None else tuple(result.detections))


def eigencam_map(model, x, target, layer, options) -> Attribution:
    return eigencam(model, x, layer)
