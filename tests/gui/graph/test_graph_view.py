"""The Graph tab's canvas on layouts built by hand (no model, no worker): what it draws, the wheel, a double click,
the overview, and what the search finds."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent

from inspector.core.graph.layout.graph_layout import Box, Frame, Layout, Route
from inspector.core.graph.record.nodes import Edge, Graph, Group, Node
from inspector.core.graph.search import holders, matches, shown_as
from inspector.gui.views.graph.items import EdgeItem, label_of
from inspector.gui.views.graph.tab import GraphTab

GRAPH = Graph(
    nodes=(Node("input", "input", "input"), Node("stem", "module", "Conv2d", "stem"),
           Node("body.conv", "module", "Conv2d", "body.conv", group="body"),
           Node("body.add()", "function", "add", group="body"),
           Node("head", "module", "Linear", "head"), Node("output", "output", "output")),
    edges=(Edge("input", "stem", (1, 3, 8, 8), "float32", key="input"),
           Edge("stem", "body.conv", (1, 4, 8, 8), "float32", key="stem:output"),
           Edge("body.conv", "body.add()", (1, 4, 8, 8), "float32"),
           Edge("stem", "body.add()", (1, 4, 8, 8), "float32"),
           Edge("body.add()", "head", (1, 4), "float16"),
           Edge("head", "output", (1, 2), "float32")),
    groups=(Group("body", "body", "Block", children=("body.conv", "body.add()")),))


def hand_layout(graph: Graph, open_groups=(), step: float = 70.0, width: float = 140.0) -> Layout:
    """A column: every node of the closed view under the one before, each open group's frame around its nodes."""
    view = graph.closed(open_groups)
    boxes = {n.id: Box(n.id, 20.0, i * step, width, 40.0) for i, n in enumerate(view.nodes)}
    frames = {}
    for g in view.groups:
        inside = [boxes[n.id] for n in view.nodes if g.id in holders(view, n.id)]
        top, bottom = min(b.y for b in inside), max(b.y + b.height for b in inside)
        frames[g.id] = Frame(g.id, 4.0, top - 30, width + 32, bottom - top + 42)
    routes = tuple(Route(e.source, e.target, e.index, ((boxes[e.source].x + width / 2, boxes[e.source].y + 40),
                                                         (boxes[e.target].x + width / 2, boxes[e.target].y)))
                   for e in view.edges)
    return Layout(view, frozenset(open_groups), boxes, frames, routes, width + 40, len(view.nodes) * step)


@pytest.fixture
def tab(qtbot):
    tab = GraphTab()
    qtbot.addWidget(tab)
    tab.resize(600, 400)
    tab.show()
    qtbot.waitExposed(tab)
    return tab


def draw(qtbot, tab, layout) -> None:
    tab.scene.show_layout(layout)
    qtbot.waitUntil(lambda: not tab.scene.drawing())


def test_every_node_frame_and_edge_is_drawn(qtbot, tab):
    closed = hand_layout(GRAPH)
    draw(qtbot, tab, closed)
    assert set(tab.scene.nodes) == {"input", "stem", "body", "head", "output"}
    assert tab.scene.nodes["body"].is_group and not tab.scene.frames
    edges = [i for i in tab.scene.items() if isinstance(i, EdgeItem)]
    assert len(edges) == len(closed.routes)
    assert {e.label for e in edges} >= {"1x3x8x8", "1x4 float16"}  # shapes; a dtype where it is not float32

    draw(qtbot, tab, hand_layout(GRAPH, {"body"}))
    assert set(tab.scene.nodes) == {"input", "stem", "body.conv", "body.add()", "head", "output"}
    assert set(tab.scene.frames) == {"body"}
    assert tab.scene.frames["body"].title() == "body  (Block)"


def test_a_tensor_read_twice_is_labelled_once(qtbot, tab):
    draw(qtbot, tab, hand_layout(GRAPH, {"body"}))
    from_stem = [i for i in tab.scene.items() if isinstance(i, EdgeItem) and i.edge.source == "stem"]
    assert len(from_stem) == 2 and sorted(bool(e.label) for e in from_stem) == [False, True]
    assert label_of(GRAPH.edges[0]) == "1x3x8x8"


def wheel(view, steps: int, at: QPoint) -> None:
    event = QWheelEvent(QPointF(at), QPointF(view.viewport().mapToGlobal(at)), QPoint(0, 0), QPoint(0, steps),
                        Qt.NoButton, Qt.NoModifier, Qt.NoScrollPhase, False)
    view.wheelEvent(event)


def test_wheel_zooms_and_a_double_click_on_empty_space_fits(qtbot, tab):
    draw(qtbot, tab, hand_layout(GRAPH, step=300.0))  # taller than the view
    view = tab.view
    view.first_view("input")
    before = view.zoom()
    wheel(view, 240, view.viewport().rect().center())
    assert view.zoom() > before * 1.3
    wheel(view, -480, view.viewport().rect().center())
    assert view.zoom() < before

    empty = QPoint(3, 3)
    view.set_zoom(2.0)
    view.centerOn(0, 0)
    assert view.item_at(empty)[0] is None
    qtbot.mouseDClick(view.viewport(), Qt.LeftButton, pos=empty)
    seen = view.mapToScene(view.viewport().rect()).boundingRect()
    assert seen.contains(view.content())


def test_the_overview_shows_while_the_graph_is_larger_than_the_view(qtbot, tab):
    draw(qtbot, tab, hand_layout(GRAPH, step=300.0))
    view = tab.view
    view.set_zoom(1.0)
    view.centerOn(0, 0)
    assert view.overview.isVisible()
    below = view.mapToScene(view.viewport().rect().center())
    point = view.overview.from_scene(QPointF(80, 1400)).toPoint()
    qtbot.mouseClick(view.overview, Qt.LeftButton, pos=point)
    assert view.mapToScene(view.viewport().rect().center()).y() > below.y() + 500  # moved down there
    view.fit_all()
    assert not view.overview.isVisible()


def test_a_first_view_is_readable(qtbot, tab):
    draw(qtbot, tab, hand_layout(GRAPH, step=400.0))  # far taller than the view: never fitted to a speck
    tab.view.first_view("input")
    assert tab.view.zoom() >= 0.8
    seen = tab.view.mapToScene(tab.view.viewport().rect()).boundingRect()
    assert seen.contains(tab.scene.rect_of("input"))


def test_search_finds_names_and_types_in_closed_groups():
    assert matches(GRAPH, "type:Conv2d") == ["stem", "body.conv"]
    assert matches(GRAPH, "TYPE:block") == ["body"]
    assert matches(GRAPH, "body") == ["body", "body.conv", "body.add()"]
    assert matches(GRAPH, "nothing like it") == []
    closed = hand_layout(GRAPH)
    assert shown_as(GRAPH, closed, "body.conv") == "body"
    assert shown_as(GRAPH, hand_layout(GRAPH, {"body"}), "body.conv") == "body.conv"
    assert holders(GRAPH, "body.add()") == ["body"]


def test_ctrl_f_goes_to_the_search_box_and_typing_clears_the_count(qtbot, tab):
    tab.view.setFocus()
    tab.found.setText("1 of 2")
    qtbot.keyClick(tab.view, Qt.Key_F, Qt.ControlModifier)
    assert tab.search.hasFocus()
    qtbot.keyClicks(tab.search, "conv")
    assert tab.found.text() == ""


def test_the_cursor_says_what_a_click_does(qtbot, tab):
    draw(qtbot, tab, hand_layout(GRAPH))
    view = tab.view
    view.fit_all()
    node = tab.scene.nodes["stem"]
    qtbot.mouseMove(view.viewport(), view.mapFromScene(node.mapToScene(node.rect.center())))
    assert view.viewport().cursor().shape() == Qt.PointingHandCursor
    qtbot.mouseMove(view.viewport(), QPoint(2, 2))
    assert view.viewport().cursor().shape() == Qt.OpenHandCursor


def test_the_overview_of_a_tall_chain_is_a_narrow_strip_in_the_corner(qtbot, tab):
    draw(qtbot, tab, hand_layout(GRAPH, step=300.0))  # 160 wide, 1800 tall: the overview is as tall as allowed
    view = tab.view
    view.set_zoom(1.0)
    view.centerOn(0, 0)
    o, v = view.overview, view.viewport().geometry()
    assert o.isVisible()
    content = view.content()
    most_h = min(150, v.height() // 3)
    assert o.height() == most_h
    assert o.width() == max(40, round((content.width() + 16) * (most_h - 2) / (content.height() + 16)) + 2) < 60
    assert (o.geometry().right(), o.geometry().bottom()) == (v.right() - 7, v.bottom() - 7)  # QRect: right = left + width - 1
    tab.resize(1200, 900)  # a larger view: still at most SIZE
    qtbot.waitUntil(lambda: view.overview.height() == 150)
