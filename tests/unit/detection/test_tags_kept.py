"""Issue 52, item 8: a box's tag is drawn from its text's extent and glyphs kept once worked out (the font loaded
once): the picture is the same bytes as Pillow's own `ImageDraw.text` draws, the first time and from what is kept,
at any sub-pixel start, and a picture of boxes is the one drawn with nothing kept."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from inspector.core.detection import tags
from inspector.core.detection.changes import box_changes
from inspector.core.detection.picture import draw_changes, draw_detections
from inspector.core.records.detections import Detection

TEXTS = ("person 0.87", "- traffic light 0.52, now 0.31", "+ dog 0.61", "hair drier 0.01 moved", "j", "…")


def by_hand(background: np.ndarray, corner, text: str, colour) -> np.ndarray:
    """The tag as Pillow draws it: a rectangle of `colour` the text's width and 5 pixels wide (2 a side and its
    own right edge) and its height and 2 high, over the box's corner (inside it where there is no room above),
    moved left to end inside the picture; the text in black on a light colour, white on a dark one, 2 pixels in
    and 1 down, by `ImageDraw.text` in Pillow's default font at 11 pixels."""
    image = Image.fromarray(background.copy())
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=11)
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    w, h = right - left + 4, bottom - top + 2
    x0, y0 = corner
    y = y0 - h if y0 - h >= 0 else y0
    x, y = max(0.0, min(x0, image.width - 1 - w)), max(0.0, min(y, image.height - 1 - h))
    draw.rectangle((x, y, x + w, y + h), fill=colour)
    ink = (0, 0, 0) if 0.299 * colour[0] + 0.587 * colour[1] + 0.114 * colour[2] > 140 else (255, 255, 255)
    draw.text((x + 2, y + 1 - top), text, fill=ink, font=font)
    return np.asarray(image)


def drawn(background: np.ndarray, corner, text: str, colour) -> np.ndarray:
    image = Image.fromarray(background.copy())
    tags.draw_tag(ImageDraw.Draw(image), corner, text, colour, tags.tag_font())
    return np.asarray(image)


@pytest.mark.parametrize("text", TEXTS)
def test_a_tag_from_what_is_kept_is_the_tag_pillow_draws_at_any_sub_pixel_start(text):
    rng = np.random.default_rng(len(text))
    background = rng.integers(0, 256, (60, 220, 3), dtype=np.uint8)  # every glyph's blend shows
    starts = [(0.0, 0.0), (0.5, 0.5), (0.49, 0.51), (0.984375, 0.015625), (3.25, 17.75), (200.3, 40.6), (-0.4, 2.2)]
    starts += [tuple(v) for v in rng.uniform(0, 50, (12, 2))]
    for corner in starts:
        for colour in ((31, 119, 180), (255, 212, 0), (0, 200, 83)):  # white text, black text, black text
            expected = by_hand(background, corner, text, colour)
            for _ in range(2):  # worked out, then from what is kept
                np.testing.assert_array_equal(drawn(background, corner, text, colour), expected)


def test_pictures_drawn_from_what_is_kept_are_those_drawn_with_nothing_kept(monkeypatch):
    rng = np.random.default_rng(3)
    names = ("person", "a very long class name indeed", "car")

    def boxes(count: int, side: int) -> list[Detection]:
        found = []
        for k in range(count):
            x0, y0 = rng.uniform(-3, side, 2)
            w, h = rng.uniform(2, 60, 2)
            found.append(Detection((x0, y0, x0 + w, y0 + h), k, names[k % 3], float(rng.uniform(0.2, 1))))
        return sorted(found, key=lambda d: -d.score)

    pictures = []
    for side, size in ((40, None), (128, 320), (100, 64)):
        picture = rng.integers(0, 256, (side, side + 7, 3), dtype=np.uint8)
        before, after = boxes(8, side), boxes(8, side)
        changes = box_changes(before, after, 0.5)
        assert {c.kind for c in changes} >= {"appeared", "vanished"}
        pictures.append(lambda p=picture, b=before, a=after, c=changes, s=size: (
            draw_changes(p, b, a, c, s), draw_detections(p, b, 0.3, 1, s)))
    monkeypatch.setattr(tags, "REMEMBER", False)
    plain = [draw() for draw in pictures]
    monkeypatch.setattr(tags, "REMEMBER", True)
    for _ in range(2):
        for draw, expected in zip(pictures, plain):
            for got, want in zip(draw(), expected):
                np.testing.assert_array_equal(got, want)
