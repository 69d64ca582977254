"""Deterministic detection scenes: 1 to 4 of the demo's shapes on one background.

``make_scene(seed)`` always gives the same pixels, boxes and labels for the same
seed. Images are square (so a batch of them resizes to one size with no padding,
the cheapest to train on), 128 to 192 pixels a side. Shapes get random class, position, scale, rotation and colour; later shapes
may partly cover earlier ones. A box is the tight bounds of the pixels where the
shape's *visible* alpha (its alpha times the transparency of every shape painted
after it) exceeds 0.5, and a shape left less than :data:`MIN_VISIBLE` visible
(by later shapes or the image border) is not painted at all, so every painted
shape has a box.

Each shape is rendered in a small square patch around it rather than over the
whole image, which is several times faster. Centres lie on a 1/8-pixel grid and
patches on whole pixels, so a patch holds the pixels ``shapes.shape_alpha``
gives on any larger canvas, shifted by whole pixels, that holds the whole shape
(the tests re-render scenes that way to check the boxes independently).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from inspector.demo.shapes import CLASSES, add_noise, background, contrasting_colour, paint, shape_alpha

MIN_SIDE, MAX_SIDE = 128, 192  # images are square, their side drawn from this range
MAX_SHAPES = 4
MIN_VISIBLE = 0.6  # fraction of a shape's own pixels that must stay visible
_TEXTURES = {CLASSES.index("stripes"), CLASSES.index("checkerboard")}
_EXTENT = 1.5  # half-size of a shape's patch over its radius (a rotated square patch reaches 1.42)


@dataclass(frozen=True)
class Placement:
    """Where and how one shape is drawn: ``shape_alpha(label, cx, cy, r, angle, default_rng(seed))``."""

    label: int
    cx: float
    cy: float
    r: float
    angle: float
    seed: int


@dataclass(frozen=True)
class Scene:
    """One generated image with its ground truth.

    ``boxes`` are float32 ``(x0, y0, x1, y1)`` in pixel-edge coordinates: a box
    covering pixel columns 3..9 has ``x0 = 3`` and ``x1 = 10``. ``boxes``,
    ``labels`` and ``placements`` are aligned and in paint order.
    """

    image: np.ndarray  # uint8 HxWx3
    boxes: np.ndarray  # float32 Nx4
    labels: np.ndarray  # int64 N, indices into CLASSES
    placements: tuple[Placement, ...]


def render_patch(p: Placement) -> tuple[np.ndarray, int, int]:
    """Alpha (float32, square) of one placed shape and the image pixel ``(x0, y0)`` of its corner."""
    half = int(np.ceil(_EXTENT * p.r)) + 1
    x0, y0 = int(np.floor(p.cx)) - half, int(np.floor(p.cy)) - half
    patch = shape_alpha(p.label, p.cx - x0, p.cy - y0, p.r, p.angle, np.random.default_rng(p.seed), 2 * half + 1)
    return patch, x0, y0


def paste(patch: np.ndarray, x0: int, y0: int, size: int) -> np.ndarray:
    """The part of ``patch`` (corner at pixel ``(x0, y0)``) inside a zero ``size`` x ``size`` image."""
    out = np.zeros((size, size), dtype=np.float32)
    ys = slice(max(y0, 0), min(y0 + patch.shape[0], size))
    xs = slice(max(x0, 0), min(x0 + patch.shape[1], size))
    if ys.start < ys.stop and xs.start < xs.stop:
        out[ys, xs] = patch[ys.start - y0:ys.stop - y0, xs.start - x0:xs.stop - x0]
    return out


def tight_box(mask: np.ndarray) -> tuple[float, float, float, float]:
    """Pixel-edge bounds ``(x0, y0, x1, y1)`` of the true pixels of a non-empty boolean mask."""
    cols, rows = np.flatnonzero(mask.any(axis=0)), np.flatnonzero(mask.any(axis=1))
    return float(cols[0]), float(rows[0]), float(cols[-1] + 1), float(rows[-1] + 1)


def _place(rng: np.random.Generator, size: int) -> list[Placement]:
    """Draw 1 to MAX_SHAPES placements whose centres keep some distance from each other."""
    placed: list[Placement] = []
    for _ in range(int(rng.integers(1, MAX_SHAPES + 1))):
        label = int(rng.integers(len(CLASSES)))
        lo, hi = (0.09, 0.3) if label in _TEXTURES else (0.07, 0.26)
        r = float(rng.uniform(lo, hi) * size)
        angle = float(rng.uniform(0.0, 2 * np.pi))
        seed = int(rng.integers(2**31))
        for _ in range(20):  # a few tries at a spot not too close to the shapes already placed
            cx, cy = (round(float(v) * 8) / 8 for v in rng.uniform(0.6 * r, size - 0.6 * r, 2))
            if all(np.hypot(cx - q.cx, cy - q.cy) >= 0.6 * (r + q.r) for q in placed):
                placed.append(Placement(label, cx, cy, r, angle, seed))
                break
    return placed


def make_scene(seed: int) -> Scene:
    """Generate the scene of ``seed`` (same seed, same scene)."""
    rng = np.random.default_rng(seed)
    size = int(rng.integers(MIN_SIDE, MAX_SIDE + 1))
    canvas, colours = background(rng, size)
    canvas = canvas.copy()
    placements = _place(rng, size)

    # decide from the last shape (never covered) to the first: the ones above are final by then
    kept: list[tuple[Placement, np.ndarray, tuple[float, float, float, float]]] = []
    cover = np.ones((size, size), dtype=np.float32)  # transparency of the kept shapes above
    for p in reversed(placements):
        patch, x0, y0 = render_patch(p)
        alpha = paste(patch, x0, y0, size)
        visible = alpha * cover > 0.5
        if visible.sum() >= MIN_VISIBLE * (patch > 0.5).sum() > 0:
            kept.append((p, alpha, tight_box(visible)))
            cover *= 1.0 - alpha
    kept.reverse()

    for p, alpha, _ in kept:
        colour = contrasting_colour(rng, colours)
        paint(canvas, alpha, colour)
        colours.append(colour)
    return Scene(
        image=add_noise(canvas, rng),
        boxes=np.array([box for _, _, box in kept], dtype=np.float32).reshape(-1, 4),
        labels=np.array([p.label for p, _, _ in kept], dtype=np.int64),
        placements=tuple(p for p, _, _ in kept),
    )
