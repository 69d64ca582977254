"""Issue 42 item 5: the Graph tab and the figures (SVG, PNG) are drawn by one renderer. Every node, frame and edge
item of the app paints the very shapes `draw_graph` puts in the figure for it (moved to the item's place), with an
overlay's fills, widths, alarm path and outline set by the app's overlay; and the pixels the app paints equal the
PNG's where the figure says a box's fill, a closed group's stack and a frame are."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter

from inspector.core.graph.draw.figure import ALARM, DIVERGENT, Overlay, draw_graph
from inspector.core.graph.draw.look import FILL, FRAME_FILL, shade
from inspector.core.graph.draw.overlay import Drawn
from inspector.core.graph.draw.parts import OUTLINE, STACK, node_parts
from inspector.core.graph.draw.png import png_image
from inspector.core.graph.layout.graph_layout import GraphLayout
from inspector.core.graph.record.nodes import Edge, Graph, Group, Node
from inspector.gui.views.graph.items import EdgeItem, FrameItem, NodeItem
from inspector.gui.views.graph.overlay import GraphOverlay
from inspector.gui.views.graph.tab import GraphTab

GRAPH = Graph(
    nodes=(Node("input", "input", "input"), Node("stem", "module", "Conv2d", "stem"),
           Node("body.conv", "module", "Conv2d", "body.conv", group="body"),
           Node("body.add()", "function", "add", group="body"),
           Node("head.fc", "module", "Linear", "head.fc", group="head"), Node("output", "output", "output")),
    edges=(Edge("input", "stem", (1, 3, 8, 8), "float32"), Edge("stem", "body.conv", (1, 4, 8, 8), "float32"),
           Edge("body.conv", "body.add()", (1, 4, 8, 8), "float32"), Edge("stem", "body.add()", (1, 4, 8, 8), "float32"),
           Edge("body.add()", "head.fc", (1, 4), "float16"), Edge("head.fc", "output", (1, 2), "float32")),
    groups=(Group("body", "body", "Block", children=("body.conv", "body.add()")),
            Group("head", "head", "Head", children=("head.fc",))))
OVERLAY = Overlay(fills={"stem": (68, 1, 84), "head": (253, 231, 37)}, edge_widths={("stem", "body.conv", None): 4.0},
                  alarm="body.add()", path=("input", "stem", "body.add()"), outline="output")


ZOOM = 4.0  # both drawn 4 pixels a unit: a closed group's stack (3 units) is 12 pixels wide


@pytest.fixture
def tab(qtbot):
    tab = GraphTab()
    qtbot.addWidget(tab)
    tab.resize(700, 500)
    tab.show()
    qtbot.waitExposed(tab)
    return tab


def _moved(shape, dx: float, dy: float):
    """`shape` moved by (dx, dy), its numbers rounded (the app adds the item's place after, the figure before)."""
    changes = {}
    for name in ("x", "y"):
        if hasattr(shape, name):
            changes[name] = round(getattr(shape, name) + (dx if name == "x" else dy), 6)
    if hasattr(shape, "points"):
        changes["points"] = tuple((round(x + dx, 6), round(y + dy, 6)) for x, y in shape.points)
    for name in ("width", "height", "room"):
        if hasattr(shape, name) and isinstance(getattr(shape, name), float):
            changes[name] = round(getattr(shape, name), 6)
    return dataclasses.replace(shape, **changes)


def _drawn(qtbot, tab, layout, overlay=None):
    tab.scene.show_layout(layout)
    qtbot.waitUntil(lambda: not tab.scene.drawing())
    if overlay is not None:
        painter = GraphOverlay(tab.scene, tab.view, lambda _text: None)
        painter.show(Drawn(overlay, overlay.outline, {}))
    return tab.scene


@pytest.mark.parametrize("overlay", [None, OVERLAY], ids=["plain", "overlay"])
def test_every_item_paints_the_figures_shapes(qtbot, tab, overlay):
    layout = GraphLayout(GRAPH).layout({"body"})
    scene = _drawn(qtbot, tab, layout, overlay)
    figure = draw_graph(layout, overlay)
    want = sorted((_moved(s, 0, 0) for s in figure.graph_items), key=repr)
    got = []
    for item in scene.items():
        if isinstance(item, (NodeItem, FrameItem, EdgeItem)):
            got += [_moved(s, item.pos().x(), item.pos().y()) for s in item.parts()]
    assert sorted(got, key=repr) == want
    roles = {s.role for s in want}
    assert {"node", "stack", "label", "toggle", "frame", "frame-title", "frame-toggle", "edge", "arrow",
            "shape"} <= roles
    if overlay is not None:  # the overlay's marks reached the items as the figure draws them
        assert ("outline" in roles and {s.stroke for s in want if s.role == "outline"} == {DIVERGENT}
                and {s.id for s in want if s.role == "node" and s.stroke == ALARM} == set(OVERLAY.path))
        assert {s.width for s in want if s.role == "edge" and s.id == "stem -> body.conv"} == {4.0}


def test_the_app_paints_the_pictures_pixels(qtbot, tab):
    """At zoom 4 the app's scene and the PNG drawn at scale 4 have the same colour inside every box, in a closed
    group's stack and inside the open frame (text and anti-aliased borders aside)."""
    layout = GraphLayout(GRAPH).layout({"body"})
    scene = _drawn(qtbot, tab, layout, OVERLAY)
    figure = draw_graph(layout, OVERLAY)
    picture = png_image(figure, ZOOM)
    ox, oy = figure.origin
    width, height = layout.width + 20, layout.height + 20
    image = QImage(round(width * ZOOM), round(height * ZOOM), QImage.Format_RGB32)
    image.fill(0xFFFFFF)
    painter = QPainter(image)
    scene.render(painter, QRectF(0, 0, image.width(), image.height()), QRectF(0, 0, width, height))
    painter.end()

    def app_at(x, y):
        c = image.pixelColor(int(x * ZOOM), int(y * ZOOM))
        return c.red(), c.green(), c.blue()

    def png_at(x, y):
        return picture.getpixel((int((x + ox) * ZOOM), int((y + oy) * ZOOM)))

    checked = 0
    for node_id, box in layout.boxes.items():
        x, y = box.x + box.width / 2, box.y + box.height - 4.5  # inside the border (3 px on the alarm path), below the text
        want = ALARM if node_id == OVERLAY.alarm else OVERLAY.fills.get(node_id, FILL[layout.graph.node(node_id).kind])
        assert app_at(x, y) == pytest.approx(want, abs=3) and png_at(x, y) == pytest.approx(want, abs=3), (
            node_id, app_at(x, y), png_at(x, y), (x, y), figure.origin)
        checked += 1
    head = layout.boxes["head"]  # the closed group's stack shows right of and below its box
    x, y = head.x + head.width + STACK / 2, head.y + head.height / 2
    assert app_at(x, y) == pytest.approx(shade(OVERLAY.fills["head"]), abs=3) == png_at(x, y), (app_at(x, y), png_at(x, y))
    out = layout.boxes["output"]  # the first divergent's outline, OUTLINE outside the box, its pen centred on it
    x, y = out.x + out.width / 2, out.y - OUTLINE
    assert app_at(x, y) == pytest.approx(DIVERGENT, abs=3) == png_at(x, y), (app_at(x, y), png_at(x, y))
    frame = layout.frames["body"]
    x, y = frame.x + 4, frame.y + frame.height - 4
    assert app_at(x, y) == pytest.approx(FRAME_FILL, abs=2) and png_at(x, y) == pytest.approx(FRAME_FILL, abs=2)
    assert checked == len(layout.boxes) == 6


def test_a_label_in_the_box_the_layout_sized_is_shown_whole(qtbot):
    """The layout sizes a box from an estimate of its text; Qt's bold glyphs are wider, so the label is drawn a
    pixel or two smaller, never cut (`reshape` was cut to `resha...`: the shrunk size was rounded up again)."""
    from inspector.core.graph.draw.look import fit_text
    from inspector.core.graph.layout.text import box_size
    from inspector.gui.views.graph.paint import text_length

    for op in ("reshape", "permute", "BatchNorm2d", "AdaptiveAvgPool2d", "interpolate", "softmax", "matmul"):
        node = Node(op, "function", op)
        parts = [s for s in node_parts(node, 0.0, 0.0, *box_size(node)) if s.role == "label"]
        text, size = fit_text(parts[0].text, parts[0].size, parts[0].room, lambda t, s: text_length(t, s, True))
        assert text == op and text_length(text, size, True) <= parts[0].room, (op, text, size)
