"""SmoothGrad (Smilkov et al. 2017) over any map: the mean (`smoothgrad`), the mean of squares
(`smoothgrad-sq`) or the variance (`vargrad`) of a base method's map over `samples` inputs x + noise,
noise ~ N(0, sigma^2) with sigma = `noise` times (max - min) of the input, as in the paper; captum's
NoiseTunnel kinds. Seeded (the seed used is returned), accumulated in float64: with noise 0 every copy is
the input, so the map is worked out once and the smoothgrad of a map is that map exactly. The base method
is given as a function of the input (and, where it can take many copies in one pass, of a batch of them:
`many`, `batch` copies a pass, the same noise drawn in the same order), so this module knows no method."""

from __future__ import annotations

import secrets
from typing import Callable

import numpy as np
import torch

from .batching import passes
from .errors import RunCancelled, SpecError
from .records.requests import SMOOTH_KINDS


def smooth(x: torch.Tensor, base: Callable[[torch.Tensor], np.ndarray], kind: str = "smoothgrad",
           samples: int = 25, noise: float = 0.15, seed: int | None = None, cancel=None,
           progress=None, many: Callable[[torch.Tensor], np.ndarray] | None = None,
           batch: int = 1) -> tuple[np.ndarray, int, float]:
    """(the smoothed map, the seed used, sigma)."""
    if kind not in SMOOTH_KINDS:
        raise SpecError(f"Unknown SmoothGrad kind {kind!r}. Use one of: {', '.join(SMOOTH_KINDS)}.")
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise SpecError(f"samples must be a whole number of at least 1, not {samples!r}.")
    if not np.isfinite(noise) or noise < 0:
        raise SpecError(f"noise must be a fraction of the input's range, 0 or more, not {noise!r}.")
    seed = secrets.randbelow(2**31) if seed is None else int(seed)
    generator = torch.Generator(device="cpu").manual_seed(seed)
    x = x.detach()
    sigma = float(noise) * float(x.max() - x.min())
    if sigma == 0:  # every copy is x: one map, exactly
        found = np.asarray(base(x), dtype=np.float64)
        if progress is not None:
            progress(samples, samples)
        mean, mean_sq = found, found * found
        result = {"smoothgrad": mean, "smoothgrad-sq": mean_sq, "vargrad": np.zeros_like(mean)}[kind]
        return result.astype(np.float32), seed, sigma
    total = squares = None
    for part in passes(samples, batch if many is not None else 1):
        if cancel is not None and cancel():
            raise RunCancelled("SmoothGrad cancelled.")
        count = part.stop - part.start
        jitter = torch.cat([torch.randn(x.shape, generator=generator, dtype=torch.float32) for _ in range(count)])
        noisy = x + sigma * jitter.to(device=x.device, dtype=x.dtype)
        maps = np.asarray(many(noisy), np.float64) if many is not None else np.asarray(base(noisy), np.float64)[None]
        for found in maps:
            total = found if total is None else total + found
            squares = found * found if squares is None else squares + found * found
        if progress is not None:
            progress(part.stop, samples)
    mean, mean_sq = total / samples, squares / samples
    result = {"smoothgrad": mean, "smoothgrad-sq": mean_sq, "vargrad": mean_sq - mean * mean}[kind]
    return result.astype(np.float32), seed, sigma
