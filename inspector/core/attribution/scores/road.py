"""ROAD's images (Rong et al., "A Consistent and Efficient Evaluation Strategy for Attribution Methods", ICML
2022): the input with a share of its pixels removed and filled in by noisy linear imputation, as the authors'
code does it (github tleemann/road_evaluation, imputations.py, NoisyLinearImputer; pytorch-grad-cam copies it).

Each removed pixel is the weighted mean of its 8 neighbours inside the image (direct ones 1/6, diagonal ones 1/12,
the weights of those outside left out), removed neighbours included: one sparse linear system over all the
removed pixels, solved once for every channel, then Gaussian noise of `noise` sigma added to each filled value.
The imputation runs on the model's input as given (after its normalisation, as pytorch-grad-cam runs it).

MoRF removes the most relevant pixels first, LeRF the least relevant: at p % the map's top (or bottom)
`records.protocols.road_removed(H * W, p)` pixels, ranked as deletion ranks them (the map's picture under its
sign, ties by pixel index). The scores of the images are drawn by `faithfulness.scored`.
"""

from __future__ import annotations

import numpy as np
import torch

#: (row offset, column offset, weight) of the 8 neighbours.
NEIGHBOURS = ((-1, -1, 1 / 12), (-1, 0, 1 / 6), (-1, 1, 1 / 12), (0, -1, 1 / 6), (0, 1, 1 / 6), (1, -1, 1 / 12),
              (1, 0, 1 / 6), (1, 1, 1 / 12))


def impute(image: torch.Tensor, removed: np.ndarray, noise: float = 0.0,
           generator: torch.Generator | None = None) -> torch.Tensor:
    """`image` (C, H, W) with the pixels where `removed` (H, W, bool) is True filled by noisy linear imputation:
    the linear system solved in float64, then noise of sigma `noise` drawn from `generator` (CPU) added."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.linalg import spsolve

    channels, height, width = image.shape
    flat = np.asarray(removed, dtype=bool).reshape(-1)
    unknown = np.flatnonzero(flat)
    if len(unknown) == 0:
        return image.clone()
    values = image.detach().cpu().double().numpy().reshape(channels, -1)
    number = np.full(height * width, -1)
    number[unknown] = np.arange(len(unknown))
    rows, cols = np.divmod(unknown, width)
    weight_sum = np.zeros(len(unknown))  # the weights of the neighbours inside the image
    known_sum = np.zeros((len(unknown), channels))  # their weighted values, of the neighbours not removed
    a_rows, a_cols, a_values = [], [], []
    for dy, dx, weight in NEIGHBOURS:
        y, x = rows + dy, cols + dx
        inside = np.flatnonzero((y >= 0) & (y < height) & (x >= 0) & (x < width))
        neighbour = y[inside] * width + x[inside]
        weight_sum[inside] += weight
        known = ~flat[neighbour]
        known_sum[inside[known]] += weight * values[:, neighbour[known]].T
        a_rows.append(inside[~known])
        a_cols.append(number[neighbour[~known]])
        a_values.append(np.full(int((~known).sum()), -weight))
    # each removed pixel: (sum of its weights) v - sum over removed neighbours w v' = sum over kept ones w x
    n = len(unknown)
    rows_all = np.concatenate([np.arange(n), *a_rows])
    cols_all = np.concatenate([np.arange(n), *a_cols])
    system = coo_matrix((np.concatenate([weight_sum, *a_values]), (rows_all, cols_all)), shape=(n, n)).tocsc()
    solved = np.asarray(spsolve(system, known_sum)).reshape(n, channels).T  # (C, n)
    filled = torch.from_numpy(solved).to(torch.float32)  # as the reference: the solution in float32, then noise
    if noise > 0:
        filled = filled + noise * torch.randn(filled.shape, generator=generator, dtype=torch.float32)
    out = image.detach().reshape(channels, -1).clone()
    out[:, torch.from_numpy(unknown).to(out.device)] = filled.to(device=out.device, dtype=out.dtype)
    return out.reshape(image.shape)


def removed_pixels(order: np.ndarray, count: int, most_relevant_first: bool, size: tuple[int, int]) -> np.ndarray:
    """The (H, W) mask of the `count` pixels removed: the first `count` of `order` (hottest first) for MoRF, the
    last `count` for LeRF."""
    mask = np.zeros(size[0] * size[1], dtype=bool)
    if count:
        mask[order[:count] if most_relevant_first else order[len(order) - count:]] = True
    return mask.reshape(size)
