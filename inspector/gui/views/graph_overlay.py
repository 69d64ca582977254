"""The Graph tab's values overlay, painted on the items the scene already holds (nothing is laid out again): each
node's fill by its value, the first NaN/Inf node red and the path to it outlined, edges as wide as their
gradient's norm, the first divergent node of a comparison outlined, and the value under the mouse said in the
tab's status line. Colours and widths come from an `Overlay` (`graph_overlay_kinds.drawn_for`)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QRectF, Qt
from PySide6.QtGui import QColor, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsPathItem

from inspector.core.graph.draw import ALARM, DIVERGENT, EDGE

from .graph_items import EdgeItem, NodeItem


def qcolour(colour) -> QColor:
    return QColor(*colour)


class GraphOverlay(QObject):
    """Paints a `Drawn` on `scene` (a GraphScene) shown in `view`; `say(text)` is the tab's status line."""

    def __init__(self, scene, view, say, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.scene, self.view, self.say = scene, view, say
        self.drawn = None  # the Drawn painted (None: the plain look)
        self.extras: list = []  # the outlines and widened edges this overlay added to the scene
        self._hovered: str | None = None  # the node whose value the status line says
        view.viewport().installEventFilter(self)

    # -- painting -------------------------------------------------------------------------
    def show(self, drawn) -> None:
        """Paint `drawn` over the items of the layout the scene shows (the plain look first)."""
        self.clear()
        self.drawn = drawn
        overlay = drawn.overlay
        for node_id, item in self.scene.nodes.items():
            colour = ALARM if node_id == overlay.alarm else overlay.fills.get(node_id)
            item.fill = None if colour is None else qcolour(colour)
            item.update()
        for item in self._edge_items():
            text = drawn.edge_texts.get(item.key)
            if text is not None:
                _, newline, key = item.tip.partition("\n")  # the capture key's line stays
                item.setToolTip(text + newline + key)
        layout = self.scene.layout
        if layout is None:
            return
        on_path = set(zip(overlay.path, overlay.path[1:]))
        for route in layout.routes:
            alarm = (route.source, route.target) in on_path
            width = overlay.edge_widths.get((route.source, route.target, route.index))
            if (width is not None or alarm) and len(route.points) >= 2:
                self._edge(route.points, (width or 1.0) + (1.0 if alarm else 0.0), ALARM if alarm else EDGE)
        for node_id in overlay.path:
            self._outline(node_id, qcolour(ALARM), 3.0)
        if drawn.outline is not None:
            self._outline(drawn.outline, qcolour(DIVERGENT), 4.0)

    def clear(self) -> None:
        """The plain look: no fills, no outlines, no widened edges."""
        self.drawn = None
        for item in self.scene.nodes.values():
            if item.fill is not None:
                item.fill = None
                item.update()
        for item in self._edge_items():
            if item.toolTip() != item.tip:
                item.setToolTip(item.tip)
        extras, self.extras = self.extras, []
        for item in extras:
            if item.scene() is self.scene:  # a new layout took the scene's items out already
                self.scene.removeItem(item)
        self._say_hovered(None)

    def _edge_items(self):
        return [item for item in self.scene.items() if isinstance(item, EdgeItem)]

    def _edge(self, points, width: float, colour) -> None:
        path = QPainterPath()
        path.moveTo(*points[0])
        for x, y in points[1:]:
            path.lineTo(x, y)
        item = QGraphicsPathItem(path)
        item.setPen(QPen(qcolour(colour), width, Qt.SolidLine, Qt.RoundCap, Qt.RoundJoin))
        item.setZValue(1.5)  # over the edge's own thin line, under the nodes
        item.setAcceptedMouseButtons(Qt.NoButton)
        self._add(item)

    def _outline(self, node_id: str, colour: QColor, width: float) -> None:
        rect = self.scene.rect_of(node_id)
        if rect is None:
            return
        path = QPainterPath()
        path.addRoundedRect(QRectF(rect).adjusted(-4, -4, 4, 4), 6, 6)
        item = QGraphicsPathItem(path)
        item.setPen(QPen(colour, width))
        item.setZValue(3)  # over the node
        item.setAcceptedMouseButtons(Qt.NoButton)
        item.setData(0, node_id)
        self._add(item)

    def _add(self, item) -> None:
        self.scene.addItem(item)
        self.extras.append(item)

    def outlined(self) -> dict[str, QColor]:
        """Node id -> the colour of its outline (tests and screenshots read it)."""
        return {item.data(0): item.pen().color() for item in self.extras if item.data(0) is not None}

    # -- the value under the mouse -----------------------------------------------------------
    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
        kind = event.type()
        if kind == QEvent.MouseMove and self.drawn is not None:
            pos = event.position().toPoint()
            item, _part = self.view.item_at(pos)
            if isinstance(item, NodeItem):
                self._say_hovered(item.node.id)
            else:
                edge = next((i for i in self.view.items(pos) if isinstance(i, EdgeItem)), None)
                self._say_hovered(("edge", edge.key) if edge is not None else None)
        elif kind == QEvent.Leave:
            self._say_hovered(None)
        return False

    def _say_hovered(self, node_id) -> None:
        """Say the value of `node_id` (a node's id, or ("edge", key) for an edge) in the status line."""
        text = None
        if node_id is not None and self.drawn is not None:
            text = (self.drawn.edge_texts.get(node_id[1]) if isinstance(node_id, tuple)
                    else self.drawn.texts.get(node_id))
        if text is None and self._hovered is None:
            return
        if text is None:
            self._hovered = None
            self.say("")
            return
        self._hovered = node_id
        self.say(text)
