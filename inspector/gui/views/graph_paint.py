"""The graph's shapes (`inspector.core.graph.draw_look`: rectangles, polylines, polygons, one line of text) painted
with a QPainter: the Graph tab's items paint the lists `draw_parts` makes for the figures, so the app and the SVG and
PNG it writes draw one graph (text fitted to its room by Qt's own metrics, as the PNG fits it by Pillow's)."""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPen, QPolygonF

from inspector.core.graph.draw_look import Polygon, Polyline, Rect, Text, fit_text

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


def paint_shapes(painter, shapes, *, text: bool = True, labels: bool = True) -> None:
    """Paint `shapes` back to front; without `text`, no text; without `labels`, no edge labels (far out)."""
    for shape in shapes:
        if not labels and shape.role in LABELS:
            continue
        if isinstance(shape, Rect):
            painter.setPen(QPen(colour(shape.stroke), shape.stroke_width) if shape.stroke is not None else Qt.NoPen)
            painter.setBrush(QBrush(colour(shape.fill)) if shape.fill is not None else Qt.NoBrush)
            rect = QRectF(shape.x, shape.y, shape.width, shape.height)
            if shape.radius:
                painter.drawRoundedRect(rect, shape.radius, shape.radius)
            else:
                painter.drawRect(rect)
        elif isinstance(shape, Polyline):
            painter.setPen(QPen(colour(shape.stroke), shape.width, Qt.SolidLine, Qt.RoundCap, Qt.RoundJoin))
            painter.setBrush(Qt.NoBrush)
            painter.drawPolyline(QPolygonF([QPointF(x, y) for x, y in shape.points]))
        elif isinstance(shape, Polygon):
            painter.setPen(Qt.NoPen)
            painter.setBrush(QBrush(colour(shape.fill)))
            painter.drawPolygon(QPolygonF([QPointF(x, y) for x, y in shape.points]))
        elif isinstance(shape, Text) and text and shape.text:
            paint_text(painter, shape)


def paint_text(painter, shape: Text) -> None:
    """One line of text at its baseline, anchored at its start, middle or end, fitted to its room."""
    bold = shape.bold
    words, px = fit_text(shape.text, shape.size, shape.room, lambda t, s: text_length(t, s, bold), shape.elide)
    f, metrics = font_and_metrics(bold, _px(px))
    width = metrics.horizontalAdvance(words)
    x = shape.x - (width / 2 if shape.anchor == "middle" else width if shape.anchor == "end" else 0.0)
    painter.setFont(f)
    painter.setPen(colour(shape.fill))
    painter.drawText(QPointF(x, shape.y), words)
