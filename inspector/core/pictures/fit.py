"""A picture drawn under a map: the input as the model sees it, at the map's pixels or a whole number of times
them. A detector's boxes are drawn on the larger picture (`drawn_side`) so that their tags, in a font of fixed
pixels, stay small beside the map however small the input is; the map's view stretches it over the map's pixels
(`covers`)."""

from __future__ import annotations

import math

#: pixels a side, at least, of a picture a box's tag is drawn on (its 11-pixel font under a fortieth of its height)
TAGGED_SIDE = 512


def drawn_side(shape: tuple[int, ...], at_least: int = TAGGED_SIDE) -> int:
    """The longer side of a picture of `shape` (H, W, ...) made a whole number of times larger, to `at_least`."""
    side = max(shape[:2])
    return side * max(1, math.ceil(at_least / side))


def covers(picture_shape: tuple[int, ...], map_shape: tuple[int, ...]) -> bool:
    """A picture of `picture_shape` (H', W', ...) lies pixel for pixel under a map of `map_shape` (H, W): the same
    pixels, or a whole number of times as many a side."""
    (h, w), (mh, mw) = picture_shape[:2], map_shape[:2]
    return mh > 0 and mw > 0 and h % mh == 0 and h // mh == w / mw and h >= mh
