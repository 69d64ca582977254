"""What the Graph tab draws: a node, an open group's frame and an edge, each painting the shapes
`inspector.core.graph.draw.parts` makes for it (the very shapes the SVG and PNG figures draw, painted by
`graph_paint`), and on top what only the app has: the tree's tick box, the selection's and the edits' strokes, an
edit badge. Items only paint; the view decides what a click does (`part_at` says what was hit).

Zoomed out far (or in the overview), items draw as plain shapes: text under a few pixels is not read anyway, and
a graph of thousands of nodes then paints quickly; a plain box still says its name at a size that reads, down to
FAR_TEXT_LOD.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainterPath, QPainterPathStroker, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem

from inspector.core.graph.draw import look
from inspector.core.graph.draw.parts import (
    EDGE_WIDTH,
    OUTLINE,
    STACK,
    edge_parts,
    frame_parts,
    frame_toggle_box,
    node_parts,
    tick_box,
    toggle_box,
)
from inspector.core.graph.layout.place import HGAP
from inspector.core.graph.layout.text import FONT_PX, TITLE_HEIGHT, node_label

from .paint import Painted, colour, font_and_metrics, paint_shapes

TEXT_LOD = 0.45  # below this zoom, no text (each glyph would be a few pixels)
LABEL_LOD = TEXT_LOD + 0.15  # below this, no edge labels
FAR_TEXT_LOD = 0.25  # from here to TEXT_LOD a plain box still says its name, FAR_FONT_PX high on screen
FAR_FONT_PX = (9, 8, 7)  # the first that fits the box
# The graph's colours are the figures' (inspector.core.graph.draw.look); selection and edits are the app's own.
FILL = {kind: QColor(*rgb) for kind, rgb in look.FILL.items()}
BORDER = QColor(*look.BORDER)
SELECTED = QColor(20, 100, 220)
EDITED = QColor(235, 130, 0)
MUTED = QColor(*look.MUTED)
FRAME_FILL = QColor(*look.FRAME_FILL)
FRAME_BORDER = QColor(*look.FRAME_BORDER)
EDGE = QColor(*look.EDGE)
LABEL = QColor(*look.LABEL)
PENCIL = "\u270e"


def rgb(qcolour: QColor) -> tuple[int, int, int]:
    return qcolour.red(), qcolour.green(), qcolour.blue()


def font(bold: bool = False, px: int = FONT_PX):
    return font_and_metrics(bold, px)[0]


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


def _mark(selected: bool, edited: bool) -> tuple[tuple[int, int, int], float] | None:
    """The app's stroke of a selected or edited node or frame (None: the figure's own)."""
    return (rgb(SELECTED), 2.5) if selected else (rgb(EDITED), 2.5) if edited else None


class NodeItem(QGraphicsItem):
    """One node as laid out. `node`: a core graph Node (in the closed view drawn); `tickable`: it is a module of
    the tree (its tick box is the tree's, read through the scene's `check_state(path)`). The values overlay sets
    `fill` (a QColor over the kind's own), `on_path` (on the path to the first NaN or Inf) and `outline` (a QColor
    around the box: a comparison's first divergent node)."""

    def __init__(self, node, box, tickable: bool) -> None:
        super().__init__()
        self.node, self.tickable = node, tickable
        self.rect = QRectF(0, 0, box.width, box.height)
        self.setPos(box.x, box.y)
        self.setZValue(2)
        self.setAcceptedMouseButtons(Qt.NoButton)  # the view decides what a click does
        self.selected = False
        self.edited = False
        self.fill: QColor | None = None
        self.on_path = False
        self.outline: QColor | None = None
        self._parts: tuple[tuple, list, Painted] | None = None  # (what they were made for, the shapes, painted)

    @property
    def is_group(self) -> bool:
        return self.node.kind == "group"

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt's name
        grow = max(OUTLINE + 2.5, HGAP / 2)  # an outline, half its pen; the edit badge; a stack; a far label
        return self.rect.adjusted(-grow, -8, max(grow, STACK + 1), max(grow, STACK + 1))

    def tick_rect(self) -> QRectF:
        return QRectF(*tick_box(self.rect.width(), self.rect.height()))

    def toggle_rect(self) -> QRectF:
        return QRectF(*toggle_box(self.rect.width(), self.rect.height()))

    def part_at(self, pos: QPointF) -> str:
        """'tick', 'toggle' or 'body' at `pos` (item coordinates)."""
        if self.tickable and self.tick_rect().adjusted(-3, -3, 3, 3).contains(pos):
            return "tick"
        if self.is_group and self.toggle_rect().adjusted(-3, -3, 3, 3).contains(pos):
            return "toggle"
        return "body"

    def title(self) -> tuple[str, str]:
        """What the box says (the layout sized it for this text): its op or type, and its path or nothing."""
        return node_label(self.node)

    def parts(self) -> list:
        """The figure's shapes of this node (`draw.parts.node_parts`) with the overlay's fill, path and outline, and
        the selection's or the edits' stroke."""
        return self._made()[1]

    def _made(self) -> tuple[tuple, list, Painted]:
        key = (None if self.fill is None else rgb(self.fill), self.selected, self.edited, self.on_path,
               None if self.outline is None else rgb(self.outline))
        if self._parts is None or self._parts[0] != key:
            stroke = _mark(self.selected, self.edited) or ((look.ALARM, 3.0) if self.on_path else None)
            shapes = node_parts(self.node, 0.0, 0.0, self.rect.width(), self.rect.height(), fill=key[0],
                                stroke=stroke, outline=None if key[4] is None else (key[4], 4.0))
            self._parts = key, shapes, Painted(shapes)
        return self._parts

    def paint(self, painter, _option, _widget=None) -> None:
        r = self.rect
        lod = lod_of(painter)
        if lod < TEXT_LOD:  # far out: a plain box (thousands of them paint quickly)
            self._paint_far(painter, lod)
            return
        paint_shapes(painter, self._made()[2])
        if self.tickable:
            draw_tick(painter, self.tick_rect(), self.scene().check_state(self.node.path))
        if self.edited:  # a badge on the corner: the label keeps its room
            badge = QRectF(r.width() - 9, -7, 14, 14)
            painter.setPen(QPen(EDITED.darker(120), 1))
            painter.setBrush(QBrush(EDITED))
            painter.drawEllipse(badge)
            painter.setFont(font(True, FONT_PX - 1))
            painter.setPen(Qt.white)
            painter.drawText(badge, Qt.AlignCenter, PENCIL)

    def far_label(self, lod: float) -> tuple[str, int]:
        """What a box far out says and its font's size in scene px: its path (or op) at FAR_FONT_PX on screen,
        smaller down to FAR_FONT_PX[-1] where that fits the box, else cut to its width; ('', 0) where the box is
        too small on screen for it (under FAR_TEXT_LOD, or lower than the text). The text may reach half the gap
        between two boxes of a layer beyond each side: it never meets its neighbours'."""
        if lod < FAR_TEXT_LOD or self.rect.height() * lod < FAR_FONT_PX[0] + 2:
            return "", 0
        op, path = self.title()
        text, room = path or op, self.rect.width() + HGAP - 2  # into the gap's half on each side, no further
        for on_screen in FAR_FONT_PX:
            px = round(on_screen / lod)
            metrics = font_and_metrics(False, px)[1]
            if metrics.horizontalAdvance(text) <= room:
                return text, px
        return metrics.elidedText(text, Qt.ElideRight, room), px

    def _paint_far(self, painter, lod: float) -> None:
        """The box in its fill (the overlay's colour kept under a selection: a stroke marks it), and its label
        where it can be read (Fit made the demo's nodes unlabelled slivers at 1280x800)."""
        r = self.rect
        fill = self.fill or FILL.get(self.node.kind, FILL["function"]).darker(108)
        text, px = self.far_label(lod)
        f, metrics = font_and_metrics(False, px) if text else (None, None)
        over = max(0.0, (metrics.horizontalAdvance(text) + 2 - r.width()) / 2) if text else 0.0
        box = r.adjusted(-over, 0, over, 0)  # a name wider than its box: the box's colour under all of it
        painter.fillRect(box, fill)
        mark = SELECTED if self.selected else EDITED if self.edited else None
        if mark is not None:
            pen = QPen(mark, 2.5)
            pen.setCosmetic(True)  # 2.5 px on screen whatever the zoom
            painter.setPen(pen)
            painter.setBrush(Qt.NoBrush)
            painter.drawRect(box)
        if text:
            painter.setFont(f)
            painter.setPen(ink(fill)[0])
            painter.drawText(r.adjusted(-HGAP / 2, 0, HGAP / 2, 0), Qt.AlignCenter, text)

def ink(fill: QColor) -> tuple[QColor, QColor]:
    """The title's and the path's colours on `fill` (the figures' rule: `draw.look.inks`)."""
    title, path = look.inks(rgb(fill))
    return QColor(*title), QColor(*path)


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
        self._parts: tuple[tuple, list, Painted, Painted] | None = None

    def boundingRect(self) -> QRectF:  # noqa: N802
        return self.rect.adjusted(-2, -2, 2, 2)

    def toggle_rect(self) -> QRectF:
        return QRectF(*frame_toggle_box(self.rect.width()))

    def title_rect(self) -> QRectF:
        return QRectF(0, 0, self.rect.width(), self.TITLE_H)

    def part_at(self, pos: QPointF) -> str:
        if self.toggle_rect().adjusted(-3, -3, 3, 3).contains(pos):
            return "toggle"
        return "title" if self.title_rect().contains(pos) else "inside"

    def title(self) -> str:
        return next(s.text for s in self.parts() if s.role == "frame-title")

    def parts(self) -> list:
        """The figure's shapes of this frame (`draw.parts.frame_parts`), with the selection's or edits' stroke."""
        return self._made()[1]

    def _made(self) -> tuple[tuple, list, Painted, Painted]:
        key = (self.selected, self.edited)
        if self._parts is None or self._parts[0] != key:
            shapes = frame_parts(self.record, 0.0, 0.0, self.rect.width(), self.rect.height(),
                                 stroke=_mark(self.selected, self.edited))
            self._parts = key, shapes, Painted(shapes), Painted(shapes[:1])
        return self._parts

    def paint(self, painter, _option, _widget=None) -> None:
        made = self._made()
        paint_shapes(painter, made[2] if lod_of(painter) >= TEXT_LOD else made[3])  # far out: the frame alone


class EdgeItem(QGraphicsItem):
    """One tensor: a polyline from its source's bottom to its target's top with its arrowhead, and (`label`) its
    shape written below its source (`label_routes`: the points of every edge carrying that tensor; given to one
    of them, so it is written once). The values overlay widens it (`set_stroke`)."""

    def __init__(self, route, edge, label: list | None = None) -> None:
        super().__init__()
        self.edge = edge
        self.setZValue(1)
        self.setAcceptedMouseButtons(Qt.NoButton)
        self.points = [QPointF(x, y) for x, y in route.points]
        self.route_points = route.points
        self.id = f"{route.source} -> {route.target}"
        self.label_parts = list(label or [])
        self.label = next((s.text for s in self.label_parts if s.role == "shape"), "")
        self.width, self.colour = EDGE_WIDTH, look.EDGE
        self._painted: tuple[list, Painted] | None = None  # its shapes and them painted: made when first painted
        self.path = QPainterPath(self.points[0]) if self.points else QPainterPath()
        for p in self.points[1:]:
            self.path.lineTo(p)
        self._bounds = self._bounds_of()
        self.tip = ""  # what hovering says without an overlay (GraphOverlay adds the gradient's norm)
        if edge is not None:
            self.tip = f"{edge.source} → {edge.target}: {edge.label}" + (f"\ncapture key {edge.key}"
                                                                       if edge.key else "")
            self.setToolTip(self.tip)
        stroker = QPainterPathStroker()
        stroker.setWidth(8)  # a thin line is hard to hover: a band around it
        self._hit = stroker.createStroke(self.path)

    def _bounds_of(self) -> QRectF:
        grow = 6.0 + 1.5 * self.width  # the arrowhead, the line's width
        bounds = self.path.boundingRect().adjusted(-grow, -grow, grow, grow)
        for shape in self.label_parts:
            if shape.role == "shape-back":
                bounds = bounds.united(QRectF(shape.x, shape.y, shape.width, shape.height))
        return bounds

    def set_stroke(self, width: float, rgb_colour) -> None:
        """Draw the edge `width` wide in `rgb_colour` (the overlay's gradient norm; the alarm's path)."""
        if (width, tuple(rgb_colour)) == (self.width, tuple(self.colour)):
            return
        self.prepareGeometryChange()
        self.width, self.colour = width, tuple(rgb_colour)
        self._painted = None
        self._bounds = self._bounds_of()
        self.update()

    def parts(self) -> list:
        """The figure's shapes of this edge: its line and arrowhead (`draw.parts.edge_parts`) and its label."""
        return self._made()[0]

    def _made(self) -> tuple[list, Painted]:
        if self._painted is None:
            shapes = edge_parts(self.route_points, self.id, width=self.width, colour=self.colour) + self.label_parts
            self._painted = shapes, Painted(shapes)
        return self._painted

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
        lod = lod_of(painter)
        if lod < TEXT_LOD:  # far out: the line alone
            painter.setPen(QPen(colour(self.colour), self.width))
            painter.drawPath(self.path)
            return
        paint_shapes(painter, self._made()[1], labels=lod >= LABEL_LOD)


def label_of(edge) -> str:
    """An edge's label: its shape (`1x64x56x56`), with the dtype where it is not float32 (`draw.look.shape_label`)."""
    return look.shape_label(edge.shape, edge.dtype)
