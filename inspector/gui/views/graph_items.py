"""What the Graph tab draws: a node (a box with its op or type and path, the tree's tick box, a +/- toggle on a
group, an edit mark), an open group's frame (its title and a - toggle) and an edge (a polyline with an arrow and
the tensor's shape). Items only paint; the view decides what a click does (`part_at` says what was hit).

Zoomed out far (or in the overview), items draw as plain shapes: text under a few pixels is not read anyway, and
a graph of thousands of nodes then paints quickly.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainterPath, QPainterPathStroker, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem

from inspector.core.graph import draw as look
from inspector.core.graph.layout_text import FONT_PX, PAD, TICK, TITLE_HEIGHT, frame_title, node_label

TEXT_LOD = 0.45  # below this zoom, no text (each glyph would be a few pixels)
# The graph's colours are the figures' (inspector.core.graph.draw); selection and edits are the app's own.
FILL = {kind: QColor(*colour) for kind, colour in look.FILL.items()}
BORDER = QColor(*look.BORDER)
SELECTED = QColor(20, 100, 220)
EDITED = QColor(235, 130, 0)
MUTED = QColor(*look.MUTED)
FRAME_FILL = QColor(*look.FRAME_FILL)
FRAME_BORDER = QColor(*look.FRAME_BORDER)
EDGE = QColor(*look.EDGE)
LABEL = QColor(*look.LABEL)
PENCIL = "\u270e"


_FONTS: dict[tuple[bool, int], tuple[QFont, QFontMetricsF]] = {}  # made once (after the QApplication), shared


def font(bold: bool = False, px: int = FONT_PX) -> QFont:
    return _font_and_metrics(bold, px)[0]


def metrics(bold: bool = False, px: int = FONT_PX) -> QFontMetricsF:
    return _font_and_metrics(bold, px)[1]


def _font_and_metrics(bold: bool, px: int) -> tuple[QFont, QFontMetricsF]:
    found = _FONTS.get((bold, px))
    if found is None:
        f = QFont()
        f.setPixelSize(px)
        f.setBold(bold)
        found = _FONTS[(bold, px)] = (f, QFontMetricsF(f))
    return found


def lod_of(painter) -> float:
    return QStyleOptionGraphicsItem.levelOfDetailFromTransform(painter.worldTransform())


def draw_tick(painter, rect: QRectF, state) -> None:
    """The tree's tick box, as the tree shows it: empty, ticked, or partly (some modules inside)."""
    painter.setPen(QPen(MUTED, 1))
    painter.setBrush(QBrush(Qt.white))
    painter.drawRect(rect)
    if state == Qt.Checked:
        painter.setPen(QPen(SELECTED, 2))
        m = rect.width() / 4
        painter.drawPolyline(QPolygonF([QPointF(rect.left() + m * 0.8, rect.center().y()),
                                        QPointF(rect.center().x() - m * 0.3, rect.bottom() - m),
                                        QPointF(rect.right() - m * 0.7, rect.top() + m)]))
    elif state == Qt.PartiallyChecked:
        painter.fillRect(rect.adjusted(3, 3, -3, -3), SELECTED)


def draw_toggle(painter, rect: QRectF, opened: bool) -> None:
    """A group's +/- (closed: + opens it; open: - closes it)."""
    painter.setPen(QPen(MUTED, 1))
    painter.setBrush(QBrush(Qt.white))
    painter.drawRect(rect)
    painter.setPen(QPen(Qt.black, 1.5))
    c = rect.center()
    h = rect.width() / 2 - 3
    painter.drawLine(QPointF(c.x() - h, c.y()), QPointF(c.x() + h, c.y()))
    if not opened:
        painter.drawLine(QPointF(c.x(), c.y() - h), QPointF(c.x(), c.y() + h))


class NodeItem(QGraphicsItem):
    """One node as laid out. `node`: a core graph Node (in the closed view drawn); `tickable`: it is a module of
    the tree (its tick box is the tree's, read through the scene's `check_state(path)`)."""

    def __init__(self, node, box, tickable: bool) -> None:
        super().__init__()
        self.node, self.tickable = node, tickable
        self.rect = QRectF(0, 0, box.width, box.height)
        self.setPos(box.x, box.y)
        self.setZValue(2)
        self.setAcceptedMouseButtons(Qt.NoButton)  # the view decides what a click does
        self.selected = False
        self.edited = False
        self.fill = None  # a colour laid over the kind's own (the values overlay)

    @property
    def is_group(self) -> bool:
        return self.node.kind == "group"

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt's name
        return self.rect.adjusted(-3, -8, 7, 5)  # the stack under a group, the edit badge

    def tick_rect(self) -> QRectF:
        return QRectF(PAD, (self.rect.height() - TICK) / 2, TICK, TICK)

    def toggle_rect(self) -> QRectF:
        return QRectF(self.rect.width() - PAD - TICK, (self.rect.height() - TICK) / 2, TICK, TICK)

    def part_at(self, pos: QPointF) -> str:
        """'tick', 'toggle' or 'body' at `pos` (item coordinates)."""
        if self.tickable and self.tick_rect().adjusted(-3, -3, 3, 3).contains(pos):
            return "tick"
        if self.is_group and self.toggle_rect().adjusted(-3, -3, 3, 3).contains(pos):
            return "toggle"
        return "body"

    def title(self) -> tuple[str, str]:
        """What the box says (the layout sized it for this text): its op or type, and its path or nothing."""
        op, where = node_label(self.node)
        if self.is_group and "(" in self.node.id:  # a method's group: `transform.postprocess(...)`
            where = self.node.id
        return op, where

    def paint(self, painter, _option, _widget=None) -> None:
        r = self.rect
        lod = lod_of(painter)
        colour = self.fill or FILL.get(self.node.kind, FILL["function"])
        if lod < TEXT_LOD:  # far out: a plain box (thousands of them paint quickly)
            painter.fillRect(r, SELECTED if self.selected else EDITED if self.edited else colour.darker(108))
            return
        if self.is_group:  # a closed group: a stack of boxes
            painter.setPen(QPen(BORDER, 1))
            painter.setBrush(QBrush(colour.darker(112)))
            painter.drawRoundedRect(r.translated(3, 3), 4, 4)
        pen = QPen(SELECTED if self.selected else EDITED if self.edited else BORDER,
                   2.5 if self.selected or self.edited else 1)
        painter.setPen(pen)
        painter.setBrush(QBrush(colour))
        radius = look.corner(self.node.kind)
        painter.drawRoundedRect(r, radius, radius)
        left, right = PAD, r.width() - PAD
        if self.tickable:
            draw_tick(painter, self.tick_rect(), self.scene().check_state(self.node.path))
            left += TICK + PAD
        if self.is_group:
            draw_toggle(painter, self.toggle_rect(), False)
            right -= TICK + PAD
        if self.edited:  # a badge on the corner: the label keeps its room
            badge = QRectF(r.width() - 9, -7, 14, 14)
            painter.setPen(QPen(EDITED.darker(120), 1))
            painter.setBrush(QBrush(EDITED))
            painter.drawEllipse(badge)
            painter.setFont(font(True, FONT_PX - 1))
            painter.setPen(Qt.white)
            painter.drawText(badge, Qt.AlignCenter, PENCIL)
        op, where = self.title()
        width = max(right - left, 10)
        title, muted = ink(colour)
        painter.setPen(title)
        if where and r.height() >= 2 * FONT_PX + 8:
            draw_fitted(painter, QRectF(left, r.height() / 2 - FONT_PX - 2, width, FONT_PX + 3), op, True)
            painter.setPen(muted)
            draw_fitted(painter, QRectF(left, r.height() / 2, width, FONT_PX + 3), where, False, Qt.ElideMiddle)
        else:
            draw_fitted(painter, QRectF(left, 0, width, r.height()), f"{op}  {where}" if where else op, True)


def ink(fill: QColor) -> tuple[QColor, QColor]:
    """The title's and the path's colours on `fill` (the figures' rule: `draw.inks`)."""
    title, path = look.inks((fill.red(), fill.green(), fill.blue()))
    return QColor(*title), QColor(*path)


def draw_fitted(painter, rect: QRectF, text: str, bold: bool, elide=Qt.ElideRight) -> None:
    """`text` in `rect`, left-aligned: a pixel or two smaller where it is a little too wide (the layout sizes boxes
    from an estimate of the text), cut with an ellipsis where that is not enough."""
    px = FONT_PX
    need = metrics(bold).horizontalAdvance(text)
    if need > rect.width():
        px = max(FONT_PX - 2, int(FONT_PX * rect.width() / need))
    painter.setFont(font(bold, px))
    painter.drawText(rect, Qt.AlignLeft | Qt.AlignVCenter, metrics(bold, px).elidedText(text, elide, rect.width()))


class FrameItem(QGraphicsItem):
    """An open group: a frame around what it holds, its title (path and type) at the top with a - toggle."""

    TITLE_H = TITLE_HEIGHT

    def __init__(self, group, frame, depth: int) -> None:
        super().__init__()
        self.record = group  # the core Group (QGraphicsItem.group() is Qt's)
        self.rect = QRectF(0, 0, frame.width, frame.height)
        self.setPos(frame.x, frame.y)
        self.setZValue(-1 + min(depth, 20) * 0.01)
        self.setAcceptedMouseButtons(Qt.NoButton)
        self.selected = False
        self.edited = False

    def boundingRect(self) -> QRectF:  # noqa: N802
        return self.rect.adjusted(-2, -2, 2, 2)

    def toggle_rect(self) -> QRectF:
        return QRectF(self.rect.width() - PAD - TICK, (self.TITLE_H - TICK) / 2 + 1, TICK, TICK)

    def title_rect(self) -> QRectF:
        return QRectF(0, 0, self.rect.width(), self.TITLE_H)

    def part_at(self, pos: QPointF) -> str:
        if self.toggle_rect().adjusted(-3, -3, 3, 3).contains(pos):
            return "toggle"
        return "title" if self.title_rect().contains(pos) else "inside"

    def title(self) -> str:
        return frame_title(self.record)

    def paint(self, painter, _option, _widget=None) -> None:
        colour = SELECTED if self.selected else EDITED if self.edited else FRAME_BORDER
        pen = QPen(colour, 2 if self.selected or self.edited else 1, Qt.DashLine)
        painter.setPen(pen)
        painter.setBrush(QBrush(FRAME_FILL))
        painter.drawRoundedRect(self.rect, 6, 6)
        if lod_of(painter) < TEXT_LOD:
            return
        draw_toggle(painter, self.toggle_rect(), True)
        painter.setPen(MUTED)
        draw_fitted(painter, QRectF(PAD, 1, self.rect.width() - 3 * PAD - TICK, self.TITLE_H), self.title(), True,
                    Qt.ElideMiddle)


class EdgeItem(QGraphicsItem):
    """One tensor: a polyline from its source's bottom to its target's top, an arrow, and (`labelled`) its shape
    written where it leaves its source (once for a tensor read by several nodes)."""

    def __init__(self, route, edge, labelled: bool = True) -> None:
        super().__init__()
        self.edge = edge
        self.setZValue(1)
        self.setAcceptedMouseButtons(Qt.NoButton)
        points = [QPointF(x, y) for x, y in route.points]
        self.path = QPainterPath(points[0]) if points else QPainterPath()
        for p in points[1:]:
            self.path.lineTo(p)
        self.points = points
        self.label = label_of(edge) if edge is not None and labelled else ""
        self.label_rect = self._label_rect()
        bounds = self.path.boundingRect().adjusted(-6, -6, 6, 6)
        self._bounds = bounds.united(self.label_rect) if self.label else bounds
        self.tip = ""  # what hovering says without an overlay (GraphOverlay adds the gradient's norm)
        if edge is not None:
            self.tip = f"{edge.source} → {edge.target}: {edge.label}" + (f"\ncapture key {edge.key}"
                                                                       if edge.key else "")
            self.setToolTip(self.tip)
        stroker = QPainterPathStroker()
        stroker.setWidth(8)  # a thin line is hard to hover: a band around it
        self._hit = stroker.createStroke(self.path)

    def _label_rect(self) -> QRectF:
        if len(self.points) < 2 or not self.label:
            return QRectF()
        start = self.points[0]  # just under the source: in the gap between two rows, in the source's frame
        width = metrics(px=FONT_PX - 1).horizontalAdvance(self.label) + 4
        return QRectF(start.x() + 4, start.y() + 3, width, FONT_PX + 2)

    def boundingRect(self) -> QRectF:  # noqa: N802
        return self._bounds

    def shape(self) -> QPainterPath:
        return self._hit

    @property
    def key(self):
        """(source, target, index) of the edge drawn (None: a route without an edge record)."""
        return None if self.edge is None else (self.edge.source, self.edge.target, self.edge.index)

    def paint(self, painter, _option, _widget=None) -> None:
        if len(self.points) < 2:
            return
        painter.setPen(QPen(EDGE, 1.2))
        painter.setBrush(Qt.NoBrush)
        painter.drawPath(self.path)
        if lod_of(painter) < TEXT_LOD:
            return  # far out: the line alone
        tip, before = self.points[-1], self.points[-2]
        d = tip - before
        length = max((d.x() ** 2 + d.y() ** 2) ** 0.5, 1e-6)
        ux, uy = d.x() / length, d.y() / length
        wing = 6.0
        left = QPointF(tip.x() - ux * wing - uy * wing * 0.5, tip.y() - uy * wing + ux * wing * 0.5)
        right = QPointF(tip.x() - ux * wing + uy * wing * 0.5, tip.y() - uy * wing - ux * wing * 0.5)
        painter.setBrush(QBrush(EDGE))
        painter.drawPolygon(QPolygonF([tip, left, right]))
        if self.label and lod_of(painter) >= TEXT_LOD + 0.15:
            painter.setPen(Qt.NoPen)
            painter.setBrush(QBrush(QColor(255, 255, 255, 210)))
            painter.drawRect(self.label_rect)
            painter.setPen(LABEL)
            painter.setFont(font(px=FONT_PX - 1))
            painter.drawText(self.label_rect, Qt.AlignCenter, self.label)


def label_of(edge) -> str:
    """An edge's label: its shape (`1x64x56x56`), with the dtype where it is not float32 (`draw.shape_label`)."""
    return look.shape_label(edge.shape, edge.dtype)
