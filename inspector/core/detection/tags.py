"""A box's tag: its text ("person 0.87") on a rectangle of the box's colour at its top-left corner, in Pillow's
default font, kept inside the picture and shortened with "…" where the picture is narrower than the text.

A picture's 20 tags took 3 ms to draw, over half of it Pillow measuring and rasterising the text, and the window
draws them again on every result and every move of the score slider. So the font is loaded once, each text's
extent is kept, and so are its rendered glyphs at each sub-pixel start Pillow renders them from: drawn from
those through Pillow's own `ImageDraw.bitmap`, a tag is the same bytes as `ImageDraw.text` draws.
`REMEMBER = False` draws each tag as Pillow draws text, every time (the bench's before)."""

from __future__ import annotations

import math
from functools import lru_cache

from PIL import Image, ImageDraw, ImageFont

TAG_PAD = 5  # a tag is its text's width and this many pixels (2 a side and its right edge's own)
TAG_FONT = 11  # the tags' font size, in pixels
REMEMBER = True  # keep the font, each text's extent and its glyphs (False: worked out at every tag)
EXTENTS_KEPT, GLYPHS_KEPT = 4096, 512  # the last texts' extents and positioned texts' glyphs: a dozen results' tags
# in the two pictures that show them (the input's and the Compare tab's), under 1 MB of memory


def tag_font(size: int = TAG_FONT):
    """Pillow's default font at `size` (loaded once while REMEMBER)."""
    return _font(size) if REMEMBER else ImageFont.load_default(size=size)


@lru_cache(maxsize=8)
def _font(size: int):
    return ImageFont.load_default(size=size)


def text_width(draw: ImageDraw.ImageDraw, text: str, font) -> int:
    left, _top, right, _bottom = draw.textbbox((0, 0), text, font=font)
    return right - left


def fitted(text: str, width_of, room: float) -> str:
    """`text`, or as much of it as fits `room` pixels ending in "…" (by `width_of`): a tag or a caption is never
    cut at the picture's edge ("checkerboa")."""
    if width_of(text) <= room:
        return text
    for end in range(len(text) - 1, 0, -1):
        if width_of(text[:end].rstrip() + "…") <= room:
            return text[:end].rstrip() + "…"
    return "…"


def tag_rect(corner: tuple[float, float], size: tuple[int, int], image: tuple[int, int]) -> tuple[float, ...]:
    """The (x0, y0, x1, y1) rectangle, corners included (Pillow's), of a tag `size` (w, h) pixels for a box whose
    top-left corner is `corner` in an `image` (W, H): on the box's top edge, over it where there is room, else
    inside it; moved left and up as far as it takes to lie inside the picture (a box at the right or bottom edge
    cut its tag there)."""
    (x0, y0), (w, h), (width, height) = corner, size, image
    y = y0 - h if y0 - h >= 0 else y0
    x, y = max(0.0, min(x0, width - 1 - w)), max(0.0, min(y, height - 1 - h))
    return x, y, x + w, y + h


def draw_tag(draw: ImageDraw.ImageDraw, corner: tuple[float, float], text: str, colour, font) -> None:
    """`text` in `font` (`tag_font()`) on a rectangle of `colour` for a box whose top-left corner is `corner`
    (`tag_rect`), in black or white, whichever reads on the colour."""
    width, height = draw.im.size
    text = fitted(text, lambda t: _width(draw, t, font) + TAG_PAD, width)
    left, top, right, bottom = _extent(draw, text, font)
    rect = tag_rect(corner, (right - left + TAG_PAD - 1, bottom - top + 2), (width, height))
    draw.rectangle(rect, fill=colour)
    dark = sum(c * w for c, w in zip(colour, (0.299, 0.587, 0.114))) > 140
    _text(draw, (rect[0] + 2, rect[1] + 1 - top), text, (0, 0, 0) if dark else (255, 255, 255), font)


def _width(draw: ImageDraw.ImageDraw, text: str, font) -> int:
    left, _top, right, _bottom = _extent(draw, text, font)
    return right - left


def _extent(draw: ImageDraw.ImageDraw, text: str, font) -> tuple[int, int, int, int]:
    """`draw.textbbox((0, 0), text, font=font)`, kept per text for the tags' own font."""
    if REMEMBER and font is _font(TAG_FONT) and draw.mode == "RGB":
        return _tag_extent(text)
    return draw.textbbox((0, 0), text, font=font)


@lru_cache(maxsize=EXTENTS_KEPT)
def _tag_extent(text: str) -> tuple[int, int, int, int]:
    return ImageDraw.Draw(Image.new("RGB", (1, 1))).textbbox((0, 0), text, font=_font(TAG_FONT))


def _text(draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, fill, font) -> None:
    """`draw.text(xy, text, fill, font)`, from the text's glyphs kept for the sub-pixel start it is drawn from.

    Pillow draws a line of text at `int(x), int(y)` from glyphs rendered with the start `math.modf` of each (they
    shift by a pixel or not with it), blended in through `ImageDraw.bitmap` with the fill colour. The glyphs are
    rendered once into an "L" canvas from that start (a blend of 255 over 0 is the glyphs' own values, and where
    they are 0 the picture is left as it was), then drawn at the same whole pixel through the same call."""
    glyphs = None
    if REMEMBER and font is _font(TAG_FONT) and draw.mode == "RGB":
        glyphs = _glyphs(text, math.modf(xy[0])[0], math.modf(xy[1])[0])
    if glyphs is None:  # not remembered, or a text Pillow would place left of or above its start (none of ours)
        draw.text(xy, text, fill=fill, font=font)
        return
    draw.bitmap((int(xy[0]), int(xy[1])), glyphs, fill=fill)


@lru_cache(maxsize=GLYPHS_KEPT)
def _glyphs(text: str, x: float, y: float) -> Image.Image | None:
    """`text` rendered from the start (x, y) (each in (-1, 1)) into an "L" canvas at (0, 0); None where its glyphs
    begin left of or above that start (the canvas would cut them)."""
    left, top, right, bottom = _tag_extent(text)
    if left < 0 or top < 0:
        return None
    canvas = Image.new("L", (right + 2, bottom + 2))  # room for the glyphs and the pixel a start may add
    ImageDraw.Draw(canvas).text((x, y), text, fill=255, font=_font(TAG_FONT))
    return canvas
