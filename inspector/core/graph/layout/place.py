"""Coordinates of one level from its layered order and the sizes of its boxes: each layer a band as tall as its
tallest box (boxes centred in it), bands `VGAP` apart; in a band the boxes keep their order, `HGAP` apart, each
as near as it can be to where igraph put it (scaled by `unit`), the row's overlaps resolved by least squares
(`spread`). Cheap (linear in the level's slots): a level is placed again whenever one of its groups opens or
closes, with the order kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .levels import LevelOrder, Slot

HGAP = 24.0  # between two boxes of a layer
VGAP = 40.0  # between two layers: room for the shape written on an edge
DUMMY_WIDTH = 8.0  # what an edge passing a layer takes of it


@dataclass(frozen=True)
class Placement:
    """A level's boxes (member -> x, y, width, height) and the edges' passing points (dummy slot -> x, top,
    bottom of its band), from the top-left of the level's bounding box, and that box's size."""

    boxes: dict[str, tuple[float, float, float, float]]
    bends: dict[Slot, tuple[float, float, float]]
    width: float
    height: float


def spread(desired: list[float], widths: list[float], gap: float) -> list[float]:
    """Centres of a row of boxes of `widths`, in this order, at least `gap` apart, nearest to the `desired` centres
    in least squares: with o_i the least distance from the first centre to the i-th, the centres less o_i must not
    decrease, which is isotonic regression of desired_i - o_i (pool adjacent violators)."""
    offsets, o = [], 0.0
    for i, w in enumerate(widths):
        if i:
            o += (widths[i - 1] + w) / 2 + gap
        offsets.append(o)
    blocks: list[list[float]] = []  # [sum, count] of pooled targets
    for d, o in zip(desired, offsets):
        blocks.append([d - o, 1])
        while len(blocks) > 1 and blocks[-2][0] * blocks[-1][1] > blocks[-1][0] * blocks[-2][1]:
            s, n = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += n
    centres = []
    for s, n in blocks:
        centres.extend([s / n] * int(n))
    return [c + o for c, o in zip(centres, offsets)]


def place(order: LevelOrder, size: Callable[[str], tuple[float, float]], unit: float) -> Placement:
    """The coordinates of a level ordered as `order`, its members of `size(member)` (width, height)."""
    boxes: dict[str, tuple[float, float, float, float]] = {}
    bends: dict[Slot, tuple[float, float, float]] = {}
    y = 0.0
    for row in order.layers:
        sizes = [size(s) if isinstance(s, str) else (DUMMY_WIDTH, 0.0) for s in row]
        band = max(h for _w, h in sizes)
        centres = spread([order.hint[s] * unit for s in row], [w for w, _h in sizes], HGAP)
        for slot, (w, h), cx in zip(row, sizes, centres):
            if isinstance(slot, str):
                boxes[slot] = (cx - w / 2, y + (band - h) / 2, w, h)
            else:
                bends[slot] = (cx, y, y + band)
        y += band + VGAP
    if not order.layers:
        return Placement({}, {}, 0.0, 0.0)
    left = min([x for x, _y, _w, _h in boxes.values()] + [x - DUMMY_WIDTH / 2 for x, _t, _b in bends.values()])
    right = max([x + w for x, _y, w, _h in boxes.values()] + [x + DUMMY_WIDTH / 2 for x, _t, _b in bends.values()])
    boxes = {m: (x - left, y0, w, h) for m, (x, y0, w, h) in boxes.items()}
    bends = {s: (x - left, t, b) for s, (x, t, b) in bends.items()}
    return Placement(boxes, bends, right - left, y - VGAP)
