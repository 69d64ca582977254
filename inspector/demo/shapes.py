"""Deterministic synthetic dataset: coloured shapes and textures on varied backgrounds.

Every image is drawn from a seeded :class:`numpy.random.Generator`, so the same
seed always yields the same pixels. Masks are rendered at 4x resolution and
averaged down, which gives smooth (anti-aliased) edges.
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

CLASSES: tuple[str, ...] = (
    "circle", "square", "triangle", "star", "cross", "ring", "stripes", "checkerboard",
)
SIZE = 64  # side length of a dataset image in pixels
_SS = 4  # supersampling factor for anti-aliased masks
_TEXTURES = {"stripes", "checkerboard"}


def _downsample(mask: np.ndarray) -> np.ndarray:
    """Average ``_SS`` x ``_SS`` blocks of a supersampled mask."""
    h, w = mask.shape[0] // _SS, mask.shape[1] // _SS
    return mask.reshape(h, _SS, w, _SS).mean(axis=(1, 3), dtype=np.float32)


def _polygon(points: np.ndarray, size: int) -> np.ndarray:
    """Rasterise a polygon given in image pixel coordinates into an alpha mask."""
    img = Image.new("L", (size * _SS, size * _SS), 0)
    ImageDraw.Draw(img).polygon([tuple(p) for p in (points * _SS).tolist()], fill=255)
    return _downsample(np.asarray(img, dtype=np.float32) / 255.0)


def _grid(cx: float, cy: float, angle: float, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Supersampled pixel coordinates rotated by ``angle`` around (cx, cy)."""
    t = (np.arange(size * _SS, dtype=np.float32) + 0.5) / _SS
    x, y = (t - cx)[None, :], (t - cy)[:, None]  # broadcast to HxW below
    c, s = float(np.cos(angle)), float(np.sin(angle))
    return c * x + s * y, -s * x + c * y


def _star_points(n: int, inner: float) -> np.ndarray:
    """Unit star outline with ``n`` tips alternating radius 1 and ``inner``."""
    k = np.arange(2 * n)
    radii = np.where(k % 2 == 0, 1.0, inner)
    theta = np.pi * k / n - np.pi / 2
    return np.stack([radii * np.cos(theta), radii * np.sin(theta)], axis=1)


def _cross_points(arm: float) -> np.ndarray:
    """Unit plus-sign outline whose arms have half-width ``arm``."""
    a = arm
    return np.array([(-a, -1), (a, -1), (a, -a), (1, -a), (1, a), (a, a), (a, 1),
                     (-a, 1), (-a, a), (-1, a), (-1, -a), (-a, -a)], dtype=np.float64)


def shape_alpha(label: int, cx: float, cy: float, r: float, angle: float,
                rng: np.random.Generator, size: int = SIZE) -> np.ndarray:
    """Alpha mask (float32, HxW in [0, 1]) of one shape of class ``label``."""
    name = CLASSES[label]
    if name in ("circle", "ring"):
        u, v = _grid(cx, cy, 0.0, size)
        d = np.sqrt(u * u + v * v)
        inside = d <= r
        if name == "ring":
            inside &= d >= r * rng.uniform(0.5, 0.75)
        return _downsample(inside.astype(np.float32))
    if name in _TEXTURES:
        u, v = _grid(cx, cy, angle, size)
        if rng.random() < 0.5:
            region = (np.abs(u) <= r) & (np.abs(v) <= r)  # square patch
        else:
            region = u * u + v * v <= r * r  # round patch
        if name == "stripes":
            period = rng.uniform(4.0, min(10.0, r / 1.5))
            pattern = np.floor(u / (period / 2)) % 2 == 0
        else:
            cell = rng.uniform(3.0, min(7.0, r / 2.5))
            pattern = (np.floor(u / cell) + np.floor(v / cell)) % 2 == 0
        return _downsample((region & pattern).astype(np.float32))
    if name == "square":
        unit = np.array([(-1, -1), (1, -1), (1, 1), (-1, 1)], dtype=np.float64) * 0.8
    elif name == "triangle":
        unit = _star_points(3, 1.0)[::2] * 1.1
    elif name == "star":
        unit = _star_points(5, rng.uniform(0.38, 0.5))
    else:  # cross
        unit = _cross_points(rng.uniform(0.25, 0.4))
    c, s = np.cos(angle), np.sin(angle)
    rot = np.array([[c, -s], [s, c]])
    return _polygon(unit @ rot.T * r + np.array([cx, cy]), size)


def background(rng: np.random.Generator, size: int = SIZE) -> tuple[np.ndarray, list[np.ndarray]]:
    """Random flat, gradient or noisy background; returns (HxWx3 float32, its colours)."""
    c1 = rng.uniform(0, 255, 3)
    kind = rng.integers(3)
    if kind == 0:  # flat colour
        return np.broadcast_to(c1, (size, size, 3)).astype(np.float32), [c1]
    if kind == 1:  # linear gradient in a random direction
        c2 = np.clip(c1 + rng.uniform(-90, 90, 3), 0, 255)
        theta = rng.uniform(0, 2 * np.pi)
        t = np.linspace(-0.5, 0.5, size, dtype=np.float32)
        x, y = np.meshgrid(t, t)
        w = np.clip(np.cos(theta) * x + np.sin(theta) * y + 0.5, 0, 1)[..., None]
        return (c1 * (1 - w) + c2 * w).astype(np.float32), [c1, c2]
    # mild smooth noise: a coarse random grid upsampled bilinearly
    coarse = rng.uniform(-30, 30, (8, 8, 3)).astype(np.float32)
    noise = np.stack([np.asarray(Image.fromarray(coarse[..., i], mode="F")
                                 .resize((size, size), Image.BILINEAR)) for i in range(3)], -1)
    return np.clip(c1 + noise, 0, 255).astype(np.float32), [c1]


def contrasting_colour(rng: np.random.Generator, avoid: list[np.ndarray],
                       min_dist: float = 110.0) -> np.ndarray:
    """Random RGB colour at least ``min_dist`` away from every colour in ``avoid``."""
    best, best_d = None, -1.0
    for _ in range(50):
        col = rng.uniform(0, 255, 3)
        d = min(float(np.linalg.norm(col - a)) for a in avoid) if avoid else 1e9
        if d >= min_dist:
            return col
        if d > best_d:
            best, best_d = col, d
    return best  # type: ignore[return-value]


def paint(canvas: np.ndarray, alpha: np.ndarray, colour: np.ndarray) -> None:
    """Alpha-blend a flat ``colour`` into ``canvas`` (HxWx3 float32) in place."""
    a = alpha[..., None]
    canvas *= 1.0 - a
    canvas += a * colour.astype(np.float32)


def add_noise(canvas: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Add mild Gaussian pixel noise and quantise to uint8."""
    sigma = rng.uniform(0.0, 10.0)
    noisy = canvas + rng.normal(0.0, sigma, canvas.shape).astype(np.float32)
    return np.clip(np.rint(noisy), 0, 255).astype(np.uint8)


def render_array(label: int, rng: np.random.Generator, size: int = SIZE) -> np.ndarray:
    """Render one example of class ``label`` as an HxWx3 uint8 array."""
    canvas, colours = background(rng, size)
    canvas = canvas.copy()
    textured = CLASSES[label] in _TEXTURES
    r = rng.uniform(0.22, 0.5) * size if textured else rng.uniform(0.16, 0.4) * size
    margin = min(r, 0.5 * size) * 0.8
    cx, cy = rng.uniform(margin, size - margin, 2)
    angle = rng.uniform(0, 2 * np.pi)
    alpha = shape_alpha(label, cx, cy, r, angle, rng, size)
    paint(canvas, alpha, contrasting_colour(rng, colours))
    return add_noise(canvas, rng)


def render(label: int, rng: np.random.Generator) -> Image.Image:
    """Render one 64x64 RGB example of class ``label``."""
    return Image.fromarray(render_array(label, rng), mode="RGB")


def make_batch(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Generate ``n`` class-balanced examples: (uint8 Nx64x64x3, int64 N labels)."""
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n) % len(CLASSES)).astype(np.int64)
    images = np.empty((n, SIZE, SIZE, 3), dtype=np.uint8)
    for i, label in enumerate(labels):
        images[i] = render_array(int(label), rng)
    return images, labels
