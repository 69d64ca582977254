"""A segmentation's picture: the predicted class of every pixel, coloured over the input (numpy only).

Colours follow the PASCAL VOC palette (class 0, the background, is left clear), so a VOC model's
classes get the colours people know from its dataset. `legend` names the classes present.
"""

from __future__ import annotations

import numpy as np

from ..records.labels import label_name


def palette(count: int) -> np.ndarray:
    """(count, 3) uint8 colours: the PASCAL VOC colour map (bits of the class index spread over RGB)."""
    colours = np.zeros((count, 3), dtype=np.uint8)
    for index in range(count):
        c, r, g, b = index, 0, 0, 0
        for shift in range(7, -1, -1):
            r |= ((c >> 0) & 1) << shift
            g |= ((c >> 1) & 1) << shift
            b |= ((c >> 2) & 1) << shift
            c >>= 3
        colours[index] = (r, g, b)
    return colours


def overlay(picture: np.ndarray, classes: np.ndarray, opacity: float = 0.55, size: int | None = None) -> np.ndarray:
    """`picture` (H, W, 3 uint8) with every non-background pixel tinted by its class colour.
    `classes` (h, w) is resized to the picture by nearest neighbour when it differs; with `size`,
    the picture is first shrunk (nearest) to at most `size` pixels a side, the size it is shown at."""
    if size is not None and max(picture.shape[:2]) > size:
        step = -(-max(picture.shape[:2]) // size)
        picture = picture[::step, ::step]
    h, w = picture.shape[:2]
    if classes.shape != (h, w):
        rows = np.arange(h) * classes.shape[0] // h
        cols = np.arange(w) * classes.shape[1] // w
        classes = classes[rows][:, cols]
    colours = palette(int(classes.max()) + 1)[classes].astype(np.float32)
    tinted = picture.astype(np.float32)
    mask = classes > 0
    tinted[mask] = (1 - opacity) * tinted[mask] + opacity * colours[mask]
    return tinted.round().astype(np.uint8)


def legend(classes: np.ndarray, labels: list[str] | None) -> list[tuple[int, str, tuple[int, int, int], float]]:
    """(class, label, colour, share of pixels) for every class present, most pixels first."""
    counts = np.bincount(classes.reshape(-1))
    colours = palette(len(counts))
    present = [i for i in np.argsort(-counts, kind="stable") if counts[i]]
    return [(int(i), label_name(int(i), labels), tuple(int(v) for v in colours[i]),
             float(counts[i] / classes.size)) for i in present]
