"""Colour ranges that a few extreme values do not wash out (numpy only).

Saliency and guided backprop maps often hold a handful of pixels far above the rest; scaled by
min..max the picture is all one colour. Clipping the top of the range at a percentile (99 by
default) keeps the structure visible; the colour bar says where the clip is.
"""

from __future__ import annotations

import numpy as np


def magnitude(attribution_map: np.ndarray) -> np.ndarray:
    """An (H, W) float32 map: (C, H, W) maps take max |.| over channels; NaN and Inf become 0."""
    m = np.asarray(attribution_map, dtype=np.float32)
    if m.ndim == 3:
        m = np.abs(m).max(axis=0)
    if m.ndim != 2:
        raise ValueError(f"an attribution map is (H, W) or (C, H, W), not {m.shape}")
    return np.nan_to_num(m, nan=0.0, posinf=0.0, neginf=0.0)


def clip_levels(values: np.ndarray, percentile: float = 99.0) -> tuple[float, float]:
    """(low, high): the smallest value and the `percentile`-th one (100 = the largest); a flat map
    gets a unit range above its value."""
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return 0.0, 1.0
    lo = float(v.min())
    hi = float(np.percentile(v, percentile)) if percentile < 100 else float(v.max())
    if hi <= lo:
        hi = float(v.max())
    if hi <= lo:
        hi = lo + 1.0
    return lo, hi
