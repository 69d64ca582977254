"""Colour ranges that a few extreme values do not wash out (numpy only).

Saliency and guided backprop maps often hold a handful of pixels far above the rest; scaled by
min..max the picture is all one colour. Clipping the top of the range at a percentile (99 by
default) keeps the structure visible; the colour bar says where the clip is.
"""

from __future__ import annotations

import numpy as np


def clip_levels(values: np.ndarray, percentile: float = 99.0, signed: bool = False) -> tuple[float, float]:
    """(low, high): the smallest value and the `percentile`-th one (100 = the largest); a flat map
    gets a unit range above its value. `signed`: a range symmetric about 0, (-p, p) with p the
    `percentile`-th |value| (a diverging colour map centred at 0)."""
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return (-1.0, 1.0) if signed else (0.0, 1.0)
    if signed:
        a = np.abs(v)
        top = float(np.percentile(a, percentile)) if percentile < 100 else float(a.max())
        top = top if top > 0 else float(a.max())
        return (-top, top) if top > 0 else (-1.0, 1.0)
    lo = float(v.min())
    hi = float(np.percentile(v, percentile)) if percentile < 100 else float(v.max())
    if hi <= lo:
        hi = float(v.max())
    if hi <= lo:
        hi = lo + 1.0
    return lo, hi
