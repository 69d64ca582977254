"""Wires the Graph tab to the state and the module tree.

The worker (asked through the state's `graph`, GraphState) records the graph of the loaded model on the input of the
result on screen when the tab is shown (once per model and input, not per run) and lays it out; opening or closing a
group is laid out on a plain thread (`LayoutThread`: the layout is torch-free). The GUI thread only draws. A node is
the tree's module: a click shows that layer everywhere (through the tree's current row, as a click there does), its
tick box is the tree's tick (read from and written to the tree's model: one state), right-click opens the tree's
menu, and the edits of its module mark it and are listed on hover.
"""

from __future__ import annotations

from itertools import count

from PySide6.QtCore import QObject, QPointF, QRectF, Qt

from inspector.core.common.errors import first_line
from inspector.core.graph.search import holders, matches, shown_as
from inspector.core.records.failure import Failure

from ..views.graph.items import FrameItem, NodeItem
from ..worker.graph import LayoutThread

_CHECK = Qt.CheckStateRole


class GraphController(QObject):
    """The Graph tab (`tab`, a GraphTab), the tree (`layer_model`, `tree_view` over `proxy`); `menu_for(path)`
    builds the tree's context menu for a module path (None: the menu without a module)."""

    def __init__(self, state, tab, layer_model, tree_view, proxy, menu_for) -> None:
        super().__init__(state)
        self.state, self.tab, self.layer_model, self.tree_view, self.proxy = state, tab, layer_model, tree_view, proxy
        self.menu_for = menu_for
        self.view, self.scene = tab.view, tab.scene
        self.layouts_thread = LayoutThread(self)
        self._ids = count(1)
        self._asked = None  # the (model request, input) whose graph was asked for
        self._graph_id = 0
        self._layout_token = 0
        self.graph = self.layouts = self.layout = None
        self.open: frozenset[str] = frozenset()
        self._selected: str | None = None  # an id of the whole graph (a layer name: `path` or `path#K`)
        self._anchor = None  # (group id, where its corner was on screen) while a group opens or closes
        self._then = None  # what to do once the next layout is drawn (a search centres its match)
        self._indices: dict | None = None  # module path -> the tree model's index
        self._search = ("", -1)  # the text searched and the match shown
        self._graph_model = None  # the model (its request) of the graph drawn last
        self._outputs: dict = {}  # node id -> the labels of the tensors it makes (in the layout drawn)
        self.scene.check_state = self.check_state
        self.scene.tickable = self.tickable
        self.scene.decorate = self._decorate
        state.sigViewShown.connect(lambda _view: self.ensure())
        state.sigResult.connect(lambda _outcome: self.ensure())
        state.sigEditsSet.connect(lambda _edits: self._redecorate())
        state.sigLayerSelected.connect(self._on_layer_selected)
        state.graph.sigGraph.connect(self._on_graph)
        self.layouts_thread.sigLayout.connect(self._on_layout)
        tree_view.selectionModel().currentChanged.connect(self._on_tree_current)
        layer_model.dataChanged.connect(lambda *_a: self.view.viewport().update())
        layer_model.modelReset.connect(self._forget_indices)
        self.view.sigNodeClicked.connect(self.select_everywhere)
        self.view.sigTickClicked.connect(self.tick)
        self.view.sigGroupToggled.connect(self.toggle)
        self.view.sigMenuAsked.connect(self._on_menu)
        tab.sigSearch.connect(self.search)

    def stop(self) -> None:
        self.scene.stop()
        self.layouts_thread.stop()

    # -- recording ------------------------------------------------------------------------
    def key(self):
        """(model request, input) of the result on screen; a video's: the video (its graph is recorded once, on
        the frame on screen, not again for every frame)."""
        s = self.state
        if s.model is None or s.outcome is None or s.shown_choice is None:
            return None
        live = s.live
        if live.feed is not None and live.shown_frame is not None:
            return s.model.request, live.feed.source
        return s.model.request, s.shown_choice[0]

    def ensure(self) -> None:
        """On the tab: ask for the graph of the model and input on screen unless it was asked for already."""
        if self.state.view != "graph":
            return
        key = self.key()
        if key is None:
            if self.graph is None:
                self.tab.clear("The graph is recorded after the model's first run.")
            return
        if key == self._asked:
            return
        self._asked = key
        self._graph_id = next(self._ids)
        self._layout_token += 1  # a layout of the graph before, still on its way, is not drawn
        self._then = self._anchor = None
        self.graph = self.layouts = self.layout = None
        live = self.state.live
        frame = live.shown_frame if live.feed is not None else None
        name = f"{key[1]}@frame {frame.index}" if frame is not None else key[1]
        self.tab.clear(f"Recording the graph of {key[0].source} on {name} …")
        self.state.graph.record(key[0], name, self._graph_id, frame.rgb if frame is not None else None)

    def _on_graph(self, run_id: int, drawn) -> None:
        if run_id != self._graph_id:
            return  # asked for another model or input since
        if isinstance(drawn, Failure):
            self._asked = None if drawn.cancelled else self._asked  # cancelled: asked again when shown again
            text = "Recording the graph was cancelled (Esc); show the tab again to record it." if drawn.cancelled \
                else f"No graph: {first_line(drawn.message)} The module tree still works."
            self.tab.clear(text, failed=not drawn.cancelled)
            return
        self.graph, self.layouts, self.open = drawn.graph, drawn.layouts, frozenset()
        self._search = ("", -1)
        model = self._asked[0] if self._asked is not None else None
        if model != self._graph_model:  # another model: the text searched was for the last one's names
            self.tab.search.clear()
        self._graph_model = model
        self._draw(drawn.layout, first=True)

    # -- laying out ---------------------------------------------------------------------------
    def toggle(self, group_id: str) -> None:
        """Open a closed group, close an open one; the group stays where it is on screen."""
        if self.layouts is None:
            return
        rect = self.scene.rect_of(group_id)
        if rect is not None:
            self._anchor = (group_id, self.view.mapFromScene(rect.topLeft()))
        self._lay_out(self.open ^ {group_id})

    def _lay_out(self, open_groups) -> None:
        self._layout_token += 1
        self.layouts_thread.ask(self.layouts, open_groups, self._layout_token)

    def _on_layout(self, token: int, layout) -> None:
        if token != self._layout_token or self.layouts is None:
            return
        if isinstance(layout, Failure):
            self.tab.say(f"Could not lay the graph out: {first_line(layout.message)}", failed=True)
            return
        self.open = frozenset(layout.open_groups)
        self._draw(layout)
        then, self._then = self._then, None
        if then is not None:
            then()

    def _draw(self, layout, first: bool = False) -> None:
        self.layout = layout
        self._outputs = {}
        for edge in layout.graph.edges:
            self._outputs.setdefault(edge.source, {})[edge.label] = None
        self.scene.show_layout(layout)
        self.tab.set_caption(self.graph, len(layout.boxes))
        self.tab.say("")
        anchor, self._anchor = self._anchor, None
        self.tab.layout().activate()  # the caption's and the status line's heights taken before the graph is placed
        if first:
            self.view.first_view("input")
        elif anchor is not None and self.scene.rect_of(anchor[0]) is not None:
            corner = self.scene.rect_of(anchor[0]).topLeft()
            now = self.view.mapToScene(anchor[1])
            centre = self.view.mapToScene(self.view.viewport().rect().center())
            self.view.centerOn(QPointF(centre.x() + corner.x() - now.x(), centre.y() + corner.y() - now.y()))
            self._into_view(anchor[0])
        self.view.overview.follow()

    def _into_view(self, item_id: str) -> None:
        """Scroll so that the top of what `item_id` is drawn as shows (a group opened or closed from the menu or
        by code while off screen stayed off screen)."""
        rect = self.scene.rect_of(item_id)
        seen = self.view.mapToScene(self.view.viewport().rect()).boundingRect()
        if rect is None or seen.intersects(rect.adjusted(0, 0, 0, -max(0.0, rect.height() - 40))):
            return
        top = QRectF(rect.x(), rect.y(), min(rect.width(), seen.width() * 0.9), min(rect.height(), seen.height() * 0.6))
        self.view.ensureVisible(top, 20, 20)

    # -- the tree's modules ---------------------------------------------------------------------
    def _forget_indices(self) -> None:
        self._indices = None

    def index_of(self, path: str):
        if self._indices is None:
            found, model, todo = {}, self.layer_model, [self.layer_model.index(r, 0) for r in
                                                        range(self.layer_model.rowCount())]
            while todo:
                index = todo.pop()
                found[model.path_of(index)] = index
                todo.extend(model.index(r, 0, index) for r in range(model.rowCount(index)))
            self._indices = found
        return self._indices.get(path)

    def check_state(self, path: str):
        index = self.index_of(path)
        return self.layer_model.data(index, _CHECK) if index is not None else Qt.Unchecked

    def module_of(self, item_id: str) -> str | None:
        """The module path node or group `item_id` (of the layout drawn) stands for, None for a function, the
        input or output, a method's group or a module the tree lacks."""
        graph = self.layout.graph if self.layout is not None else None
        if graph is None:
            return None
        try:
            node = graph.node(item_id)
        except KeyError:
            node = None
        if node is not None and node.kind not in ("module", "group"):
            return None
        path = node.path if node is not None else graph.group(item_id).path
        if (node is None or node.kind == "group") and self.graph.group(item_id).method:
            return None  # a method's group (`transform.postprocess(...)`): no module of its own in the tree
        return path if path and self.index_of(path) is not None else None

    def tickable(self, node) -> bool:
        return self.module_of(node.id) is not None

    def tick(self, path: str) -> None:
        """A node's tick box: the tree's tick of `path` flips (a partly ticked group: all of it ticked)."""
        index = self.index_of(path)
        if index is not None:
            ticked = self.layer_model.data(index, _CHECK) == Qt.Checked
            self.layer_model.setData(index, Qt.Unchecked if ticked else Qt.Checked, _CHECK)

    def _on_menu(self, item_id: str, pos) -> None:
        """The tree's menu of the node's module, then what the graph adds: open or close the group, fit."""
        menu = self.menu_for(self.module_of(item_id))
        menu.addSeparator()
        if self.layout is not None and item_id in self.layout.frames:
            menu.addAction("Close this group", lambda: self.toggle(item_id))
        elif self.layout is not None and self.layout.graph.node(item_id).kind == "group":
            menu.addAction("Open this group", lambda: self.toggle(item_id))
        menu.addAction("Close every group", lambda: self._lay_out(frozenset()))
        menu.addAction("Fit the graph in view", self.view.fit_all)
        menu.popup(pos)

    # -- selection ------------------------------------------------------------------------------
    def select_everywhere(self, item_id: str) -> None:
        """A click on a node: that layer is the one shown everywhere (the tree's current row; the Layer and
        Compare tabs follow it as they follow the tree); a function, the input or output is marked here."""
        self._mark(item_id)
        path = self.module_of(item_id)
        if path is None:
            return
        row = self.proxy.mapFromSource(self.index_of(path))
        if row.isValid():
            self.tree_view.setCurrentIndex(row)
            self.tree_view.scrollTo(row)
        if item_id != path and item_id in self.state.layer_names():
            self.state.select_layer(item_id)  # a later call of the module (`path#K`)
        self._mark(item_id)

    def _on_layer_selected(self, name) -> None:
        if name:
            self._mark(name)

    def _on_tree_current(self, current, _previous) -> None:
        path = self.layer_model.path_of(self.proxy.mapToSource(current))
        if path and (self._selected is None or self._selected.split("#")[0] != path):
            self._mark(path)

    def _mark(self, item_id: str) -> None:
        """Outline what `item_id` is drawn as (itself, or the closed group it lies in)."""
        self._selected = item_id
        for item in list(self.scene.nodes.values()) + list(self.scene.frames.values()):
            self._decorate(item)

    def shown_selected(self) -> str | None:
        if self._selected is None or self.layout is None or self.graph is None:
            return None
        return shown_as(self.graph, self.layout, self._selected)

    # -- marks ----------------------------------------------------------------------------------
    def edits_of(self, item) -> list:
        """The edits of the module a node stands for (a closed group: of the modules inside it too)."""
        if isinstance(item, NodeItem):
            path, call, inside = item.node.path, item.node.call, item.is_group
        else:
            path, call, inside = item.record.path, item.record.call, False
        if not path or (isinstance(item, NodeItem) and self.module_of(item.node.id) is None):
            return []
        return [e for e in self.state.edits if (e.key.layer == path and (not e.key.call or e.key.call == call))
                or (inside and e.key.layer.startswith(path + "."))]

    def _decorate(self, item) -> None:
        shown = self.shown_selected()
        edits = self.edits_of(item)
        item_id = item.node.id if isinstance(item, NodeItem) else item.record.id
        was = (item.selected, item.edited)
        item.selected = item_id == shown
        item.edited = any(e.enabled for e in edits)
        item.setToolTip(tooltip_of(item, edits, self.graph, self._outputs))
        if was != (item.selected, item.edited):
            item.update()

    def _redecorate(self) -> None:
        for item in list(self.scene.nodes.values()) + list(self.scene.frames.values()):
            self._decorate(item)

    # -- search -----------------------------------------------------------------------------------
    def search(self, text: str, step: int = 1) -> None:
        """Centre and select the next match of `text` (opening the groups around it); say 'k of n'."""
        if self.graph is None or not text.strip():
            self.tab.found.setText("" if self.graph is not None else "no graph yet")
            return
        found = matches(self.graph, text)
        if not found:
            self.tab.found.setText("no match")
            self._search = (text, -1)
            return
        at = (self._search[1] + step if self._search[0] == text else 0) % len(found)
        self._search = (text, at)
        self.tab.found.setText(f"{at + 1} of {len(found)}")
        target = found[at]
        if target in self.layout.boxes or target in self.layout.frames:
            self._go(target)
            return
        self._then = lambda: self._go(target)
        self._lay_out(self.open | set(holders(self.graph, target)))

    def _go(self, target: str) -> None:
        rect = self.scene.rect_of(target)
        if rect is not None:
            self.view.centre_on(rect)
        self.select_everywhere(target)


def tooltip_of(item, edits, graph, outputs: dict) -> str:
    """What hovering a node says: what it is, its output's shape, how to open it, its edits."""
    if isinstance(item, FrameItem):
        lines = [item.title(), "Open group: - or a double click on its title closes it."]
    else:
        n = item.node
        what = {"module": "module call", "function": "function", "group": "closed group", "input": "the model's input",
                "output": "the model's output"}[n.kind]
        name = n.path or n.id
        lines = [f"{name} ({n.op}): {what}" + (f", call {n.call + 1}" if n.call else "") +
                 (", in place" if n.inplace else "")]
        out = outputs.get(n.id)
        if out:
            lines.append("output " + ", ".join(out))
        if n.kind == "group" and graph is not None:
            lines.append(f"{len(graph.group(n.id).children)} steps inside: + or a double click opens it.")
    if edits:
        lines.append("Edits:")
        lines += [f"  {e}" + ("" if e.enabled else " (off)") for e in edits]
    return "\n".join(lines)
