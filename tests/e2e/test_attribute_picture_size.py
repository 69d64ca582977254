"""Issue 41, item 17: `attribute --out cam.png` on the 64 x 64 demo wrote a 64 x 64 picture. A picture is at least
256 pixels on its short side, each map value a block of scale x scale pixels (nearest neighbour), `--scale K`
choosing K (1 keeps the map's size); the `.npy` keeps the map's own size."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from inspector.cli import main

DEMO = ["attribute", "--model", "demo", "--input", "sample:star", "--method", "gradcam"]


def pixels(path) -> np.ndarray:
    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"))


def test_a_picture_of_a_64_pixel_map_is_256_pixels_in_4_by_4_blocks(tmp_path, capsys):
    assert main([*DEMO, "--out", str(tmp_path / "cam.npy")]) == 0
    assert np.load(tmp_path / "cam.npy").shape == (64, 64)  # the map's own size
    assert main([*DEMO, "--out", str(tmp_path / "cam.png")]) == 0
    big = pixels(tmp_path / "cam.png")
    assert big.shape == (256, 256, 3)  # 256 / 64 = 4
    assert main([*DEMO, "--scale", "1", "--out", str(tmp_path / "small.png")]) == 0
    small = pixels(tmp_path / "small.png")
    assert small.shape == (64, 64, 3)  # --scale 1: the map's size, as asked
    assert np.array_equal(big, np.repeat(np.repeat(small, 4, axis=0), 4, axis=1))  # each pixel a 4 x 4 block
    assert len(np.unique(small.reshape(-1, 3), axis=0)) > 50  # a map over the star, not a flat picture
    assert main([*DEMO, "--scale", "3", "--out", str(tmp_path / "three.png")]) == 0
    three = pixels(tmp_path / "three.png")
    assert np.array_equal(three, np.repeat(np.repeat(small, 3, axis=0), 3, axis=1))  # 192 x 192: as asked


@pytest.mark.parametrize(("argv", "says"), [
    (["--scale", "2", "--out", "m.npy"], "--scale sizes a picture (.png, .jpg, ...); m.npy keeps the map's own size."),
    (["--scale", "0", "--out", "m.png"], "--scale must be at least 1, not 0."),
    (["--scale", "300", "--out", "m.png"], "A scale of 300 makes the 64 x 64 map a picture of 19200 x 19200 pixels"),
])
def test_a_scale_that_cannot_be_is_one_line(argv, says, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main([*DEMO, *argv]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1 and not any(tmp_path.iterdir())
