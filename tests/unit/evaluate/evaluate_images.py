"""A folder of a few small images made in the test (two sizes, a nested folder and a file that is no image), for
the evaluation's tests."""

from __future__ import annotations

import numpy as np
from PIL import Image


def make_images(root, count: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    for i in range(count):
        folder = root / ("b" if i % 2 else "a")
        folder.mkdir(parents=True, exist_ok=True)
        Image.fromarray(rng.integers(0, 256, (48 + 16 * (i % 2), 64, 3), dtype=np.uint8)).save(folder / f"{i}.png")
    (root / "a" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n not really")
    return root
