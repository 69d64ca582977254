"""The graph's shapes (`inspector.core.graph.draw.look`: rectangles, polylines, polygons, one line of text) painted
with a QPainter: the Graph tab's items paint the lists `draw.parts` makes for the figures, so the app and the SVG and
PNG it writes draw one graph (text fitted to its room by Qt's own metrics, as the PNG fits it by Pillow's)."""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPen, QPolygonF

from inspector.core.graph.draw.look import Polygon, Polyline, Rect, Text, fit_text

LABELS = ("shape", "shape-back")  # an edge's tensor shape: drawn only close enough to read it


@lru_cache(maxsize=512)
def colour(rgb) -> QColor:
    return QColor(*rgb)


_FONTS: dict[tuple[bool, int], tuple[QFont, QFontMetricsF]] = {}  # made once (after the QApplication), shared


def font_and_metrics(bold: bool, px: int) -> tuple[QFont, QFontMetricsF]:
    found = _FONTS.get((bold, px))
    if found is None:
        f = QFont()
        f.setPixelSize(max(1, px))
        f.setBold(bold)
        found = _FONTS[(bold, px)] = (f, QFontMetricsF(f))
    return found


def _px(size: float) -> int:
    """Qt's font size for `size` px: rounded down where shrunk to fit (never wider than measured), else rounded."""
    return max(1, round(size) if abs(size - round(size)) < 1e-6 else int(size))


def text_length(text: str, px: float, bold: bool = False) -> float:
    return font_and_metrics(bold, _px(px))[1].horizontalAdvance(text)


class Painted:
    """Shapes made ready to paint once (pens, brushes, polygons, fitted text and its place): an item keeps one and
    paints it on every repaint, so a repaint is Qt calls only."""

    __slots__ = ("steps",)

    def __init__(self, shapes) -> None:
        self.steps: list[tuple] = [_step(shape) for shape in shapes if not isinstance(shape, Text) or shape.text]


@lru_cache(maxsize=256)
def _pen(rgb, width: float, round_ends: bool = False) -> QPen:
    if round_ends:
        return QPen(colour(rgb), width, Qt.SolidLine, Qt.RoundCap, Qt.RoundJoin)
    return QPen(colour(rgb), width)


@lru_cache(maxsize=256)
def _brush(rgb) -> QBrush:
    return QBrush(colour(rgb))


def _step(shape) -> tuple:
    """(kind, is an edge label, what the painter needs) for one shape."""
    label = shape.role in LABELS
    if isinstance(shape, Rect):
        pen = _pen(shape.stroke, shape.stroke_width) if shape.stroke is not None else QPen(Qt.NoPen)
        brush = _brush(shape.fill) if shape.fill is not None else QBrush(Qt.NoBrush)
        return "rect", label, pen, brush, QRectF(shape.x, shape.y, shape.width, shape.height), shape.radius
    if isinstance(shape, Polyline):
        return "line", label, _pen(shape.stroke, shape.width, True), QPolygonF([QPointF(x, y) for x, y in shape.points])
    if isinstance(shape, Polygon):
        return "polygon", label, _brush(shape.fill), QPolygonF([QPointF(x, y) for x, y in shape.points])
    if isinstance(shape, Text):
        words, f, at = _placed(shape)
        return "text", label, _pen(shape.fill, 1.0), f, at, words
    raise TypeError(f"not a shape: {shape!r}")


def _placed(shape: Text):
    """The words drawn (fitted to the room), their font and their baseline's start."""
    bold = shape.bold
    words, px = fit_text(shape.text, shape.size, shape.room, lambda t, s: text_length(t, s, bold), shape.elide)
    f, metrics = font_and_metrics(bold, _px(px))
    width = metrics.horizontalAdvance(words)
    x = shape.x - (width / 2 if shape.anchor == "middle" else width if shape.anchor == "end" else 0.0)
    return words, f, QPointF(x, shape.y)


def paint_shapes(painter, shapes, *, text: bool = True, labels: bool = True) -> None:
    """Paint `shapes` (a list, or a `Painted`) back to front; without `text`, no text; without `labels`, no edge
    labels (far out)."""
    painted = shapes if isinstance(shapes, Painted) else Painted(shapes)
    no_pen = Qt.NoPen
    for step in painted.steps:
        kind = step[0]
        if step[1] and not labels:
            continue
        if kind == "rect":
            painter.setPen(step[2])
            painter.setBrush(step[3])
            if step[5]:
                painter.drawRoundedRect(step[4], step[5], step[5])
            else:
                painter.drawRect(step[4])
        elif kind == "line":
            painter.setPen(step[2])
            painter.setBrush(Qt.NoBrush)
            painter.drawPolyline(step[3])
        elif kind == "polygon":
            painter.setPen(no_pen)
            painter.setBrush(step[2])
            painter.drawPolygon(step[3])
        elif text:
            painter.setPen(step[2])
            painter.setFont(step[3])
            painter.drawText(step[4], step[5])
