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
