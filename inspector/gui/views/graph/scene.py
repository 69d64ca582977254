"""The scene of the Graph tab: the items of one Layout, added a time-boxed chunk per event-loop turn so that a
graph of thousands of nodes never stalls the window; node lookups by id; the tick state read from the tree.

Signals
-------
sigDrawn(): every item of the layout asked for is in the scene.
"""

from __future__ import annotations

import time
from itertools import chain

from PySide6.QtCore import QRectF, Qt, QTimer, Signal
from PySide6.QtWidgets import QGraphicsScene

from inspector.core.graph.draw.parts import label_parts

from .items import EdgeItem, FrameItem, NodeItem, label_of

CHUNK_S = 0.012  # each turn adds items for at most this long
MARGIN = 800.0  # room around the graph, so that a node at its edge can be centred in the view


class GraphScene(QGraphicsScene):
    sigDrawn = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setBackgroundBrush(Qt.white)
        self.setItemIndexMethod(QGraphicsScene.NoIndex)  # items never move: no index to rebuild per layout
        self.layout = None
        self.nodes: dict[str, NodeItem] = {}
        self.frames: dict[str, FrameItem] = {}
        self.check_state = lambda _path: Qt.Unchecked  # the tree's tick of a module path (set by the controller)
        self.tickable = lambda _node: False  # whether a node is a module of the tree
        self.decorate = lambda _item: None  # the controller's marks (selection, edits, tooltip) of a new item
        self._todo = None
        self._timer = QTimer(self, singleShot=True, interval=0)
        self._timer.timeout.connect(self._add_some)

    # -- filling -------------------------------------------------------------------
    def show_layout(self, layout) -> None:
        """Replace what is drawn with `layout` (items come in over the next few turns; sigDrawn says when)."""
        self._timer.stop()
        old = self.items()  # taken out a chunk a turn too: clearing thousands at once stalled the window
        self.nodes, self.frames, self.layout = {}, {}, layout
        self.setSceneRect(QRectF(-MARGIN, -MARGIN, layout.width + 2 * MARGIN, layout.height + 2 * MARGIN))
        self._todo = chain(self._removed(old), self._items(layout))
        for view in self.views():  # painted once, when every item is in (not a growing scene each turn)
            view.viewport().setUpdatesEnabled(False)
        self._add_some()

    def empty(self) -> None:
        """Nothing drawn (the items go over the next few turns)."""
        self._timer.stop()
        old = self.items()
        self.nodes, self.frames, self.layout = {}, {}, None
        self._todo = self._removed(old)
        self._add_some()

    def _removed(self, old: list):
        """Take the items of `old` out of the scene, one a step (each deleted as its last reference goes)."""
        while old:
            self.removeItem(old.pop())
            yield None

    def _items(self, layout):
        graph = layout.graph
        for group_id, frame in layout.frames.items():
            item = FrameItem(graph.group(group_id), frame, graph.depth(group_id))
            self.frames[group_id] = item
            yield item
        for node_id, box in layout.boxes.items():
            node = graph.node(node_id)
            item = NodeItem(node, box, self.tickable(node))
            self.nodes[node_id] = item
            yield item
        edges = {}
        for edge in graph.edges:
            edges.setdefault((edge.source, edge.target, edge.index), edge)
        leaving: dict[tuple, list] = {}  # a tensor (source, index) -> the points of every route carrying it
        for route in layout.routes:
            leaving.setdefault((route.source, route.index), []).append(route.points)
        labelled = set()
        for route in layout.routes:
            tensor = (route.source, route.index)
            edge = edges.get((route.source, route.target, route.index))
            label = None
            if edge is not None and tensor not in labelled and len(route.points) >= 2:
                labelled.add(tensor)
                name = route.source + ("" if route.index is None else f"[{route.index}]")
                label = label_parts(leaving[tensor], label_of(edge), name)
            yield EdgeItem(route, edge, label)

    def _add_some(self) -> None:
        if self._todo is None:
            return
        end = time.perf_counter() + CHUNK_S
        for item in self._todo:
            if item is not None:
                self.addItem(item)
                if not isinstance(item, EdgeItem):
                    self.decorate(item)
            if time.perf_counter() > end:
                self._timer.start()
                return
        self._todo = None
        self._paint_again()
        self.sigDrawn.emit()

    def drawing(self) -> bool:
        """Items of the last layout are still being added."""
        return self._todo is not None

    def stop(self) -> None:
        self._timer.stop()
        self._todo = None
        self._paint_again()

    def _paint_again(self) -> None:
        for view in self.views():
            view.viewport().setUpdatesEnabled(True)
            view.viewport().update()

    # -- marks ----------------------------------------------------------------------
    def item_of(self, item_id: str):
        return self.nodes.get(item_id) or self.frames.get(item_id)

    def rect_of(self, item_id: str) -> QRectF | None:
        """Where node or open group `item_id` is drawn (added yet or not), None where it is not."""
        layout = self.layout
        box = None if layout is None else layout.boxes.get(item_id) or layout.frames.get(item_id)
        return None if box is None else QRectF(box.x, box.y, box.width, box.height)
