"""A figure (`figure.Figure`) as SVG text, written by hand: one element per shape, its role as the element's class
and the node's or group's id as `data-id`, so a reader (or a test) finds each node's box, label and edge.

The graph's shapes are in a `<g class="graph">` moved to the figure's origin, in the layout's own coordinates.
`scale` sizes the picture (width and height in pixels); the drawing itself is in figure units (the viewBox).
Every text is escaped and characters XML 1.0 forbids are dropped, so any graph (thousands of nodes, any names)
is a valid document.
"""

from __future__ import annotations

import re
from xml.sax.saxutils import escape, quoteattr

from .figure import Figure, Polygon, Polyline, Rect, Shape, Text

FONT_FAMILY = "DejaVu Sans, Helvetica, Arial, sans-serif"
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: str) -> str:
    return _NOT_XML.sub("", text)


def _text(text: str) -> str:
    """Text content, escaped; runs of spaces kept (SVG collapses them: `layer1  (Sequential)`)."""
    return escape(_clean(text)).replace("  ", " \u00a0")


def _attr(value: str) -> str:
    return quoteattr(_clean(value))


def _colour(colour) -> str:
    if colour is None:
        return "none"
    r, g, b = colour
    return f"#{r:02x}{g:02x}{b:02x}"


def _num(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _points(points) -> str:
    return " ".join(f"{_num(x)},{_num(y)}" for x, y in points)


def _element(shape: Shape) -> str:
    common = f' class={_attr(shape.role)}' + (f' data-id={_attr(shape.id)}' if shape.id else "")
    if isinstance(shape, Rect):
        stroke = (f' stroke="{_colour(shape.stroke)}" stroke-width="{_num(shape.stroke_width)}"'
                  if shape.stroke is not None else "")
        radius = f' rx="{_num(shape.radius)}"' if shape.radius else ""
        return (f'<rect{common} x="{_num(shape.x)}" y="{_num(shape.y)}" width="{_num(shape.width)}" '
                f'height="{_num(shape.height)}"{radius} fill="{_colour(shape.fill)}"{stroke}/>')
    if isinstance(shape, Polyline):
        return (f'<polyline{common} points="{_points(shape.points)}" fill="none" stroke="{_colour(shape.stroke)}" '
                f'stroke-width="{_num(shape.width)}" stroke-linejoin="round" stroke-linecap="round"/>')
    if isinstance(shape, Polygon):
        return f'<polygon{common} points="{_points(shape.points)}" fill="{_colour(shape.fill)}"/>'
    if isinstance(shape, Text):
        weight = ' font-weight="bold"' if shape.bold else ""
        return (f'<text{common} x="{_num(shape.x)}" y="{_num(shape.y)}" font-size="{_num(shape.size)}" '
                f'text-anchor="{shape.anchor}" fill="{_colour(shape.fill)}"{weight}>{_text(shape.text)}'
                "</text>")
    raise TypeError(f"not a shape: {shape!r}")


def svg_text(figure: Figure, scale: float = 1.0) -> str:
    """The SVG document of `figure`, `scale` pixels per figure unit."""
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_num(figure.width * scale)}" '
        f'height="{_num(figure.height * scale)}" viewBox="0 0 {_num(figure.width)} {_num(figure.height)}" '
        f'font-family={_attr(FONT_FAMILY)}>',
        f"<title>{escape(_clean(figure.title))}</title>",
        f'<rect class="background" x="0" y="0" width="{_num(figure.width)}" height="{_num(figure.height)}" '
        f'fill="{_colour(figure.background)}"/>',
        f'<g class="graph" transform="translate({_num(figure.origin[0])},{_num(figure.origin[1])})">',
        *map(_element, figure.graph_items),
        "</g>",
        *map(_element, figure.items),
        "</svg>",
    ]
    return "\n".join(lines) + "\n"
