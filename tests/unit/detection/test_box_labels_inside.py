"""Issue 41, item 15: a box's tag ("checkerboard 0.85") lies inside the picture, in the app and in `--each-box`
pictures: it was drawn from the box's left edge on and cut at the picture's right edge ("checkerboa"). Where
the picture is narrower than the text, the text is shortened with "…"; so is an `--each-box` caption wider
than its tile."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from inspector.core.attribution.per_box import CAPTION, GAP, tiled
from inspector.core.attribution.record import Attribution
from inspector.core.detection.picture import CHOSEN, draw_detections
from inspector.core.records.detections import Detection

TEXT = "checkerboard 0.85"


def text_size(text: str, size: int = 11) -> tuple[int, int]:
    """The text's width and height in Pillow's default font at `size` (what the tags are written in)."""
    left, top, right, bottom = ImageDraw.Draw(Image.new("RGB", (1, 1))).textbbox(
        (0, 0), text, font=ImageFont.load_default(size=size))
    return right - left, bottom - top


@pytest.mark.parametrize("corner", [(0, 0), (100, 30), (127, 127), (60, 0), (0, 120), (126, 2)])
@pytest.mark.parametrize("size", [(20, 12), (99, 12), (127, 12)])
def test_a_tag_rectangle_lies_inside_the_picture(corner, size):
    from inspector.core.detection.picture import tag_rect

    x0, y0, x1, y1 = tag_rect(corner, size, (128, 128))
    assert 0 <= x0 and x1 <= 127 and 0 <= y0 and y1 <= 127  # Pillow's corners are pixels: 127 is the last
    assert (x1 - x0, y1 - y0) == size  # never squeezed
    if corner[0] + size[0] <= 127:  # room: it starts at the box's left edge, as before
        assert x0 == corner[0]


def test_a_tag_at_the_right_edge_is_drawn_whole():
    """A box near the right edge of a 128 x 128 picture: its yellow tag is the text's width and 5 pixels (2 a
    side and the rectangle's own right edge), all of it on the picture; it was cut at the edge."""
    found = [Detection((100.0, 30.0, 126.0, 60.0), 7, "checkerboard", 0.85)]
    drawn = draw_detections(np.zeros((128, 128, 3), np.uint8), found, 2.0, chosen=0)
    text_w, text_h = text_size(TEXT)
    tag_top = 30 - (text_h + 2)  # above the box: there is room
    row = np.all(drawn[tag_top] == CHOSEN, axis=1)
    run = np.flatnonzero(row)
    assert len(run) == text_w + 5 and run[-1] - run[0] == text_w + 4  # one unbroken run: the whole tag
    assert run[-1] <= 127 and run[-1] == 127  # moved left to end at the picture's edge


def test_a_picture_narrower_than_the_text_shortens_it():
    found = [Detection((10.0, 20.0, 40.0, 50.0), 7, "checkerboard", 0.85)]
    drawn = draw_detections(np.zeros((64, 64, 3), np.uint8), found, 2.0, chosen=0)
    top = 20 - (text_size(TEXT)[1] + 2)
    run = np.flatnonzero(np.all(drawn[top] == CHOSEN, axis=1))
    assert run[-1] <= 63 and len(run) == run[-1] - run[0] + 1  # one run, on the picture
    assert 40 <= len(run) < text_size(TEXT)[0] + 5  # shorter than the whole text's tag, about the picture's width
    tag = drawn[top:20, run[0]:run[-1] + 1]
    assert np.all(tag[:, -2:] == CHOSEN)  # its text ends inside it, a margin of tag to its right: not cut
    from inspector.core.detection.picture import fitted

    assert fitted(TEXT, lambda t: 10 * len(t), 50) == "chec…"  # 5 characters of 10 pixels
    assert fitted(TEXT, lambda t: 10 * len(t), 170) == TEXT
    assert fitted("ab", lambda t: 100, 50) == "…"


def boxes_maps(size: int) -> list[Attribution]:
    """Two maps of a size x size picture, one per box; box 1's class name is longer than a small tile."""
    detections = (Detection((2.0, 2.0, 10.0, 10.0), 1, "a", 0.9),
                  Detection((size - 15.0, size - 15.0, size - 1.0, size - 1.0), 7, "a very long class name", 0.8))
    return [Attribution(method="saliency", map=np.arange(size * size, dtype=float).reshape(size, size),
                        target=f"box:{k}", target_index=None, detections=detections, target_detection=k)
            for k in range(2)]


def test_each_box_captions_end_inside_their_tile():
    sheet = tiled(np.zeros((40, 40, 3), np.uint8), boxes_maps(40))
    strip = sheet[:CAPTION, 40 + GAP:]  # box 1's caption, "box:1 a very long class name 0.80", over its 40 pixels
    ink = np.flatnonzero((strip < 128).any(axis=(0, 2)))
    assert ink[-1] < 40 - 1  # it ends inside its tile ("…"); it was cut at the tile's edge


def test_each_box_tiles_are_equal_blocks():
    """tiled(..., scale=3) of a 40 x 40 picture: every tile 120 x 120, each map pixel a 3 x 3 block (away from
    the box drawn)."""
    sheet = tiled(np.zeros((40, 40, 3), np.uint8), boxes_maps(40), scale=3)
    assert sheet.shape == (120 + CAPTION, 2 * 120 + GAP, 3)
    tiles = [sheet[CAPTION:, :120], sheet[CAPTION:, 120 + GAP:]]
    assert tiles[0].shape == tiles[1].shape == (120, 120, 3)
    corner = tiles[1][:60, :60]  # box 1's tile away from its box (25..39): the map alone
    assert np.array_equal(corner, np.repeat(np.repeat(corner[::3, ::3], 3, axis=0), 3, axis=1))
    assert len(np.unique(corner.reshape(-1, 3), axis=0)) > 10  # a map, not a flat colour
