"""A figure (`figure.Figure`) as a picture, drawn with Pillow at a scale (its TrueType font at the scaled size, so
text stays sharp), never larger than a sane size.

Size. `scale` pixels per figure unit (default 2: sharp on a high-density screen), raised so the short side is at
least `SHORT_SIDE` pixels (as `attribute --out x.png` is), and lowered so the picture holds at most `MOST_PIXELS`
pixels and `LONG_SIDE` a side (a graph of thousands of nodes): `png_scale` says what it chose and why, in one line.
Small pictures are drawn at twice their size and reduced (Pillow draws shapes without anti-aliasing).
"""

from __future__ import annotations

import math
from functools import lru_cache

from .figure import Figure, Polygon, Polyline, Rect, Text
from .look import fit_text
from ..sizes import DEFAULT_SCALE, LONG_SIDE, MOST_PIXELS, SHORT_SIDE

SUPERSAMPLE_PIXELS = 8_000_000  # pictures up to this size are drawn at twice the size, then reduced
LEAST_TEXT_PX = 3.0  # text smaller than this is not drawn (not read anyway; a huge graph drawn small)


def png_scale(figure: Figure, scale: float | None = None) -> tuple[float, str | None]:
    """The scale `figure` is drawn at, for `scale` asked (None: DEFAULT_SCALE), and a line saying why when it is
    not the one asked (None when it is)."""
    w, h = figure.width, figure.height
    chosen = DEFAULT_SCALE if scale is None else float(scale)
    note = None
    if min(w, h) * chosen < SHORT_SIDE:
        raised = SHORT_SIDE / min(w, h)
        if scale is not None:
            note = (f"--scale {scale:g} makes the picture {math.floor(min(w, h) * chosen)} pixels on its short side: "
                    f"drawn at {raised:.3g} ({SHORT_SIDE} pixels, the least a picture is)")
        chosen = raised
    most = min(LONG_SIDE / max(w, h), math.sqrt(MOST_PIXELS / (w * h)))
    if chosen > most:
        note = (f"the graph is {w:.0f} x {h:.0f} units: drawn at scale {most:.3g}, not {chosen:.3g} "
                f"({round(w * most)} x {round(h * most)} pixels; at most {MOST_PIXELS // 1_000_000} million pixels and "
                f"{LONG_SIDE} a side)" + ("; text under 3 pixels is left out" if 11 * most < LEAST_TEXT_PX else "")
                + "; write .svg, or close groups (--groups), for the whole graph legible")
        chosen = most
    return chosen, note


@lru_cache(maxsize=64)
def _font(px: float):
    from PIL import ImageFont

    return ImageFont.load_default(size=px)


def _rgb(colour):
    return None if colour is None else tuple(colour)


class _Painter:
    def __init__(self, draw, scale: float, dx: float = 0.0, dy: float = 0.0) -> None:
        self.draw, self.s, self.dx, self.dy = draw, scale, dx, dy

    def xy(self, x: float, y: float) -> tuple[float, float]:
        return (x + self.dx) * self.s, (y + self.dy) * self.s

    def px(self, width: float) -> int:
        return max(1, round(width * self.s))

    def shape(self, shape) -> None:
        if isinstance(shape, Rect):
            outline = _rgb(shape.stroke)
            width = self.px(shape.stroke_width) if outline else 0
            grow = width / self.s / 2  # Pillow draws a border inside the box; SVG and Qt centre it on the edge
            x0, y0 = self.xy(shape.x - grow, shape.y - grow)
            x1, y1 = self.xy(shape.x + shape.width + grow, shape.y + shape.height + grow)
            box = (x0, y0, max(x0, x1 - 1), max(y0, y1 - 1))
            if shape.radius:
                radius = min(shape.radius * self.s, (x1 - x0) / 2, (y1 - y0) / 2)
                self.draw.rounded_rectangle(box, radius, _rgb(shape.fill), outline, width)
            else:
                self.draw.rectangle(box, _rgb(shape.fill), outline, width)
        elif isinstance(shape, Polyline):
            self.draw.line([self.xy(*p) for p in shape.points], _rgb(shape.stroke), self.px(shape.width), "curve")
        elif isinstance(shape, Polygon):
            self.draw.polygon([self.xy(*p) for p in shape.points], _rgb(shape.fill))
        elif isinstance(shape, Text):
            size = shape.size * self.s
            if size < LEAST_TEXT_PX or not shape.text:
                return
            text, size = fit_text(shape.text, size, shape.room * self.s, _length, shape.elide, 2 * self.s)
            anchor = {"start": "ls", "middle": "ms", "end": "rs"}[shape.anchor]
            font = _font(round(size * 2) / 2)
            x, y = self.xy(shape.x, shape.y)
            self.draw.text((x, y), text, _rgb(shape.fill), font, anchor)
            if shape.bold:  # the default font has no bold: the text again, a little to the right
                self.draw.text((x + max(0.5, size / 22), y), text, _rgb(shape.fill), font, anchor)


def _length(text: str, px: float) -> float:
    return _font(round(px * 2) / 2).getlength(text)


def png_image(figure: Figure, scale: float):
    """`figure` drawn at `scale` pixels per figure unit (a PIL RGB image)."""
    from PIL import Image, ImageDraw

    size = (max(1, round(figure.width * scale)), max(1, round(figure.height * scale)))
    sample = 2 if size[0] * size[1] * 4 <= SUPERSAMPLE_PIXELS else 1
    image = Image.new("RGB", (size[0] * sample, size[1] * sample), _rgb(figure.background))
    draw = ImageDraw.Draw(image)
    inside = _Painter(draw, scale * sample, *figure.origin)
    for shape in figure.graph_items:
        inside.shape(shape)
    outside = _Painter(draw, scale * sample)
    for shape in figure.items:
        outside.shape(shape)
    return image if sample == 1 else image.resize(size, Image.Resampling.LANCZOS)
