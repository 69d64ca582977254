"""SmoothGrad (Smilkov et al. 2017) over any map: the mean (`smoothgrad`), the mean of squares
(`smoothgrad-sq`) or the variance (`vargrad`) of a base method's map over `samples` inputs x + noise,
noise ~ N(0, sigma^2) with sigma = `noise` times (max - min) of the input, as in the paper; captum's
NoiseTunnel kinds. Seeded (the seed used is returned), accumulated in float64: with noise 0 the
smoothgrad of a map is that map exactly. The base method is given as a function of the input, so
this module knows no method."""

from __future__ import annotations

import secrets
from typing import Callable

import numpy as np
import torch

from .errors import RunCancelled, SpecError
from .records.requests import SMOOTH_KINDS


def smooth(x: torch.Tensor, base: Callable[[torch.Tensor], np.ndarray], kind: str = "smoothgrad",
           samples: int = 25, noise: float = 0.15, seed: int | None = None, cancel=None,
           progress=None) -> tuple[np.ndarray, int, float]:
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
    total = squares = None
    for i in range(samples):
        if cancel is not None and cancel():
            raise RunCancelled("SmoothGrad cancelled.")
        jitter = torch.randn(x.shape, generator=generator, dtype=torch.float32).to(device=x.device, dtype=x.dtype)
        found = np.asarray(base(x + sigma * jitter), dtype=np.float64)
        total = found if total is None else total + found
        squares = found * found if squares is None else squares + found * found
        if progress is not None:
            progress(i + 1, samples)
    mean, mean_sq = total / samples, squares / samples
    result = {"smoothgrad": mean, "smoothgrad-sq": mean_sq, "vargrad": mean_sq - mean * mean}[kind]
    return result.astype(np.float32), seed, sigma
