"""Regenerate ``resources/samples``: ``python -m inspector.demo.make_samples``.

Writes one 64x64 PNG per class (``circle.png`` ...), a few 128x128 composed
scenes, three generated detection scenes (``detect_*.png``, from
:mod:`inspector.demo.scenes`) and the toy-model input tensors ``toy_ones.npy`` /
``toy_mixed.npy``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image

from inspector.demo.paths import samples_dir
from inspector.demo.scenes import make_scene
from inspector.demo.shapes import (
    CLASSES,
    add_noise,
    background,
    contrasting_colour,
    paint,
    render,
    shape_alpha,
)

SAMPLE_SEED = 7  # per-class sample i uses seed SAMPLE_SEED * 100 + i

# scene name -> list of (class, centre x, centre y, radius, angle in degrees)
SCENES: dict[str, list[tuple[str, float, float, float, float]]] = {
    "scene_star_and_stripes": [("star", 36, 40, 26, 10), ("stripes", 92, 88, 30, 30)],
    "scene_four_shapes": [("circle", 32, 32, 20, 0), ("triangle", 96, 34, 22, 15),
                          ("cross", 32, 96, 20, 20), ("checkerboard", 96, 96, 24, 10)],
    "scene_ring_square_star": [("ring", 34, 36, 22, 0), ("square", 94, 40, 22, 25),
                               ("star", 64, 96, 24, -8)],
}

# detection sample name -> make_scene seed (outside the training and held-out seed ranges);
# together they show all eight classes
DETECT_SCENES: dict[str, int] = {
    "detect_four_shapes": 990_000_004,  # star, circle, triangle, checkerboard
    "detect_shapes_and_textures": 990_000_005,  # square, checkerboard, stripes, cross
    "detect_three_shapes": 990_000_033,  # ring, square, circle
}


def render_scene(items: Sequence[tuple[str, float, float, float, float]],
                 seed: int, size: int = 128) -> Image.Image:
    """Compose several shapes, each in its own contrasting colour, on one background."""
    rng = np.random.default_rng(seed)
    canvas, colours = background(rng, size)
    canvas = canvas.copy()
    for name, cx, cy, r, deg in items:
        alpha = shape_alpha(CLASSES.index(name), cx, cy, r, np.deg2rad(deg), rng, size)
        paint(canvas, alpha, contrasting_colour(rng, colours))
    return Image.fromarray(add_noise(canvas, rng), mode="RGB")


def write_samples(out: Path) -> list[Path]:
    """Write all sample files into ``out`` and return their paths."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for i, name in enumerate(CLASSES):
        path = out / f"{name}.png"
        render(i, np.random.default_rng(SAMPLE_SEED * 100 + i)).save(path)
        written.append(path)
    for j, (name, items) in enumerate(SCENES.items()):
        path = out / f"{name}.png"
        render_scene(items, seed=SAMPLE_SEED * 100 + 50 + j).save(path)
        written.append(path)
    for name, seed in DETECT_SCENES.items():
        path = out / f"{name}.png"
        Image.fromarray(make_scene(seed).image, mode="RGB").save(path)
        written.append(path)
    for name, value in (("toy_ones", [[1.0, 1.0, 1.0]]), ("toy_mixed", [[1.0, -2.0, 0.5]])):
        path = out / f"{name}.npy"
        np.save(path, np.asarray(value, dtype=np.float32))
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=samples_dir())
    args = parser.parse_args(argv)
    for path in write_samples(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
