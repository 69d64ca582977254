"""The Graph tab's values overlay, painted on the items the scene already holds (nothing is laid out again): each
node's fill by its value, the first NaN/Inf node red and the path to it outlined, edges as wide as their
gradient's norm, the first divergent node of a comparison outlined, and the value under the mouse said in the
tab's status line. Colours and widths come from an `Overlay` (`inspector.core.graph.draw.overlay.drawn_for`) and
are set on the items, which draw them as the figures do (`draw.parts`)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QColor

from inspector.core.graph.draw.figure import ALARM, DIVERGENT, EDGE
from inspector.core.graph.draw.parts import EDGE_WIDTH

from .items import EdgeItem, NodeItem


def qcolour(colour) -> QColor:
    return QColor(*colour)


class GraphOverlay(QObject):
    """Paints a `Drawn` on `scene` (a GraphScene) shown in `view`; `say(text)` is the tab's status line."""

    def __init__(self, scene, view, say, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.scene, self.view, self.say = scene, view, say
        self.drawn = None  # the Drawn painted (None: the plain look)
        self._hovered: str | None = None  # the node whose value the status line says
        view.viewport().installEventFilter(self)

    # -- painting -------------------------------------------------------------------------
    def show(self, drawn) -> None:
        """Paint `drawn` over the items of the layout the scene shows (the plain look first): the figure's rules
        (`draw.figure._graph_shapes`) set on the items, which paint `draw.parts`' shapes."""
        self.clear()
        self.drawn = drawn
        overlay = drawn.overlay
        path = set(overlay.path)
        for node_id, item in self.scene.nodes.items():
            colour = ALARM if node_id == overlay.alarm else overlay.fills.get(node_id)
            item.fill = None if colour is None else qcolour(colour)
            item.on_path = node_id in path
            item.outline = qcolour(DIVERGENT) if node_id == drawn.outline else None
            item.update()
        on_path = set(zip(overlay.path, overlay.path[1:]))
        for item in self._edge_items():
            text = drawn.edge_texts.get(item.key)
            if text is not None:
                _, newline, key = item.tip.partition("\n")  # the capture key's line stays
                item.setToolTip(text + newline + key)
            if item.edge is None:
                continue
            alarm = (item.edge.source, item.edge.target) in on_path
            width = overlay.edge_widths.get(item.key, EDGE_WIDTH) + (1.0 if alarm else 0.0)
            item.set_stroke(width, ALARM if alarm else EDGE)

    def clear(self) -> None:
        """The plain look: no fills, no outlines, no widened edges."""
        self.drawn = None
        for item in self.scene.nodes.values():
            if item.fill is not None or item.on_path or item.outline is not None:
                item.fill, item.on_path, item.outline = None, False, None
                item.update()
        for item in self._edge_items():
            if item.toolTip() != item.tip:
                item.setToolTip(item.tip)
            item.set_stroke(EDGE_WIDTH, EDGE)
        self._say_hovered(None)

    def _edge_items(self):
        return [item for item in self.scene.items() if isinstance(item, EdgeItem)]

    def widened(self) -> dict:
        """Edge key -> its width, for every edge drawn wider or redder than the plain look (tests read it)."""
        return {item.key: item.width for item in self._edge_items()
                if (item.width, tuple(item.colour)) != (EDGE_WIDTH, EDGE)}

    def outlined(self) -> dict[str, QColor]:
        """Node id -> the colour of its outline: the alarm's red on the path to the first NaN or Inf, the first
        divergent node's (tests and screenshots read it)."""
        found = {node_id: qcolour(ALARM) for node_id, item in self.scene.nodes.items() if item.on_path}
        found.update({node_id: item.outline for node_id, item in self.scene.nodes.items() if item.outline is not None})
        return found

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
