"""The one rule that turns an attribution map into the picture shown and the order it is scored in.

A map (C, H, W) is summed over its channels (captum's `visualize_image_attr` does the same), then its
sign picks what is drawn and ranked:

- `positive`: max(v, 0), the evidence for the target;
- `negative`: max(-v, 0), the evidence against it (the most negative pixel is the hottest);
- `absolute`: |v|, how much a pixel matters either way;
- `signed`: v itself, drawn on a diverging colour map centred at 0, ranked most positive first.

The view draws exactly `picture_of(map, sign)` and deletion/insertion remove its pixels highest first, so
the hottest pixels on screen are the first the curves take away. Numpy only: the window reads it before the
engine loads.
"""

from __future__ import annotations

import numpy as np

from .methods import METHODS

SIGNS = ("positive", "negative", "absolute", "signed")
#: SmoothGrad's mean keeps the sign of the map it smooths; its squares and variances (smoothgrad-sq, vargrad,
#: not rows of the table) are non-negative.
_SMOOTH_MEAN = "smoothgrad"


def default_sign(method: str, of: str | None = None) -> str:
    """The sign a map of `method` is shown and scored with unless one is asked for: the method table's (signed
    for the methods whose maps have one, positive for non-negative maps); SmoothGrad's mean of `of`: of's."""
    if method == _SMOOTH_MEAN and of is not None:
        return default_sign(of)
    row = METHODS.get(method)
    return row.sign if row is not None else "positive"


def check_sign(sign) -> str:
    """`sign` when it is one of SIGNS; a ValueError in one line otherwise."""
    if sign not in SIGNS:
        raise ValueError(f"The sign is one of {', '.join(SIGNS)}, not {sign!r}.")
    return sign


def picture_of(attribution_map, sign: str) -> np.ndarray:
    """The (H, W) float32 picture of an (H, W) or (C, H, W) map under `sign`; NaN and infinities become 0."""
    check_sign(sign)
    m = np.asarray(attribution_map, dtype=np.float64)
    if m.ndim == 3:
        m = m.sum(axis=0)
    if m.ndim != 2:
        raise ValueError(f"An attribution map is (H, W) or (C, H, W), not {m.shape}.")
    m = np.nan_to_num(m, nan=0.0, posinf=0.0, neginf=0.0)
    if sign == "positive":
        m = np.maximum(m, 0.0)
    elif sign == "negative":
        m = np.maximum(-m, 0.0)
    elif sign == "absolute":
        m = np.abs(m)
    return m.astype(np.float32)


def ranked_by(sign: str) -> str:
    """In words, the order deletion and insertion take pixels in under `sign` (said under the curves)."""
    return {"positive": "pixels by positive value, highest first",
            "negative": "pixels by negative value, most negative first",
            "absolute": "pixels by |value|, largest first",
            "signed": "pixels by signed value, most positive first"}[check_sign(sign)]
