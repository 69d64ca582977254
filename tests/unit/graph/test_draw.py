"""Issue 42 item 5: the figure of a laid-out graph (`draw_graph`), its SVG and its picture, on graphs built by hand
from the records (no torch): one shape per node, frame, edge and arrow where the layout puts them; an overlay's
colours, widths, alarm and path; a graph of thousands of nodes stays a valid SVG and a picture of a sane size."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from PIL import Image

from inspector.core.graph import Edge, Graph, Group, Node
from inspector.core.graph.draw.figure import (
    ALARM,
    FILL,
    FRAME_FILL,
    Figure,
    Overlay,
    Polygon,
    Polyline,
    Rect,
    Text,
    draw_graph,
)
from inspector.core.graph.draw.png import LONG_SIDE, MOST_PIXELS, SHORT_SIDE, png_image, png_scale
from inspector.core.graph.draw.svg import svg_text
from inspector.core.graph.layout.graph_layout import GraphLayout

SVG = "{http://www.w3.org/2000/svg}"


def _blocks() -> Graph:
    """input -> blk (conv, a residual add) -> head (lin) -> output; blk and head are groups."""
    nodes = (Node("input", "input", "input"), Node("blk.conv", "module", "Conv2d", "blk.conv", group="blk"),
             Node("blk.add()", "function", "add", group="blk"), Node("head.lin", "module", "Linear", "head.lin",
                                                                     group="head"),
             Node("output", "output", "output"))
    edges = (Edge("input", "blk.conv", (1, 4, 8, 8), "float32"), Edge("blk.conv", "blk.add()", (1, 4, 8, 8), "float32"),
             Edge("input", "blk.add()", (1, 4, 8, 8), "float32"), Edge("blk.add()", "head.lin", (1, 4, 8, 8), "float32"),
             Edge("head.lin", "output", (1, 10), "float16"))
    groups = (Group("blk", "blk", "Block", children=("blk.conv", "blk.add()")),
              Group("head", "head", "Head", children=("head.lin",)))
    return Graph(nodes, edges, groups)


def _of(figure, kind, role):
    return [s for s in figure.graph_items if isinstance(s, kind) and s.role == role]


def test_every_node_frame_and_edge_is_drawn_where_the_layout_puts_it():
    layout = GraphLayout(_blocks()).layout({"blk"})
    figure = draw_graph(layout, subtitle="by hand")
    boxes = {r.id: r for r in _of(figure, Rect, "node")}
    assert set(boxes) == {"input", "blk.conv", "blk.add()", "head", "output"} == {n.id for n in layout.graph.nodes}
    for node, box in layout.boxes.items():
        assert (boxes[node].x, boxes[node].y, boxes[node].width, boxes[node].height) == (box.x, box.y, box.width,
                                                                                          box.height)
    assert [(r.id, r.fill) for r in _of(figure, Rect, "frame")] == [("blk", FRAME_FILL)]
    assert [t.text for t in _of(figure, Text, "frame-title")] == ["blk  (Block)"]
    assert sorted(a.id for a in _of(figure, Polygon, "arrow")) == sorted(
        f"{r.source} -> {r.target}" for r in layout.routes) and len(layout.routes) == 5
    for line, route in zip(_of(figure, Polyline, "edge"), layout.routes):
        assert line.points[:-1] == route.points[:-1]  # the last point: the arrowhead's base
    shapes = {t.id: t.text for t in _of(figure, Text, "shape")}  # once per tensor, below its source
    assert shapes == {"input": "1x4x8x8", "blk.conv": "1x4x8x8", "blk.add()": "1x4x8x8", "head": "1x10 float16"}
    below = next(t for t in _of(figure, Text, "shape") if t.id == "blk.conv")
    box = layout.boxes["blk.conv"]
    assert box.y + box.height < below.y < box.y + box.height + 20 and below.x > box.x + box.width / 2
    labels = [(t.id, t.text) for t in _of(figure, Text, "label")]
    assert ("blk.conv", "Conv2d") in labels and ("blk.conv", "blk.conv") in labels and ("head", "Head") in labels
    assert {r.id for r in _of(figure, Rect, "toggle")} == {"head"}  # the closed group's +
    assert boxes["blk.conv"].fill == FILL["module"] and boxes["head"].fill == FILL["group"]
    assert [t.text for t in figure.items if t.role == "title"] == ["The graph of the forward"]
    assert [t.text for t in figure.items if t.role == "subtitle"] == ["by hand"]
    assert figure.width >= layout.width and figure.height > layout.height + figure.origin[1]


def test_an_overlay_colours_nodes_widens_edges_and_marks_the_path_to_the_first_nan():
    layout = GraphLayout(_blocks()).layout()
    overlay = Overlay({"input": (1, 2, 3)}, {("input", "blk", None): 4.0}, alarm="head", path=("input", "blk", "head"),
                      legend=("a legend line",))
    figure = draw_graph(layout, overlay, notes=("a note",))
    boxes = {r.id: r for r in _of(figure, Rect, "node")}
    assert boxes["input"].fill == (1, 2, 3) and boxes["head"].fill == ALARM and boxes["output"].fill == FILL["output"]
    assert {n for n, b in boxes.items() if b.stroke == ALARM} == {"input", "blk", "head"}
    lines = {line.id: line for line in _of(figure, Polyline, "edge")}
    assert (lines["input -> blk"].width, lines["input -> blk"].stroke) == (5.0, ALARM)  # 4, and 1 more on the path
    assert (lines["head -> output"].width, lines["head -> output"].stroke) != (1.0, ALARM)
    assert [t.text for t in figure.items if t.role == "note"] == ["a legend line", "a note"]


def test_the_svg_is_the_figure():
    layout = GraphLayout(_blocks()).layout({"blk"})
    figure = draw_graph(layout)
    root = ET.fromstring(svg_text(figure, 2.0))
    assert (float(root.get("width")), float(root.get("height"))) == (figure.width * 2, figure.height * 2)
    graph = root.find(f"{SVG}g[@class='graph']")
    rects = {r.get("data-id"): r for r in graph.iter(f"{SVG}rect") if r.get("class") == "node"}
    box = layout.boxes["blk.add()"]
    assert [float(rects["blk.add()"].get(k)) for k in ("x", "y", "width", "height")] == pytest.approx(
        [box.x, box.y, box.width, box.height], abs=0.01)
    assert rects["blk.add()"].get("fill") == "#eeeeee"
    assert root.find(f"{SVG}title").text == "The graph of the forward"


def test_the_picture_has_each_box_in_its_colour():
    layout = GraphLayout(_blocks()).layout({"blk"})
    figure = draw_graph(layout)
    picture = png_image(figure, 3.0)
    assert picture.size == (round(figure.width * 3), round(figure.height * 3))
    ox, oy = figure.origin
    for node, kind in (("blk.conv", "module"), ("head", "group"), ("output", "output")):
        box = layout.boxes[node]
        y = (oy + box.y + box.height / 2) * 3
        assert picture.getpixel((int((ox + box.x + 3) * 3), int(y))) == pytest.approx(FILL[kind], abs=2)
    frame = layout.frames["blk"]
    assert picture.getpixel((int((ox + frame.x + 4) * 3), int((oy + frame.y + frame.height - 4) * 3))) == \
        pytest.approx(FRAME_FILL, abs=2)
    assert picture.getpixel((2, 2)) == (255, 255, 255)


def test_the_picture_scale():
    small = draw_graph(GraphLayout(_blocks()).layout())
    assert png_scale(small) == (2.0, None)
    scale, note = png_scale(small, 0.25)  # too small: raised to the least short side
    assert min(small.width, small.height) * scale == pytest.approx(SHORT_SIDE)
    assert note.startswith("--scale 0.25 makes the picture ") and f"({SHORT_SIDE} pixels" in note


def _chain(n: int) -> Graph:
    """A chain of n modules whose names hold what XML must escape, and a character it forbids."""
    ids = ["input", *(f"m{k}<&\"'\x01>" for k in range(n)), "output"]
    nodes = [Node("input", "input", "input"), *(Node(i, "module", "Odd<&>", i) for i in ids[1:-1]),
             Node("output", "output", "output")]
    return Graph(tuple(nodes), tuple(Edge(a, b, (1, 3), "float32") for a, b in zip(ids, ids[1:])),
                 notes=("TorchScript runs compiled & takes no hooks: the model is <one> node.",))


def test_thousands_of_nodes_stay_a_valid_svg_and_a_picture_of_a_sane_size():
    figure = draw_graph(GraphLayout(_chain(3000)).layout())
    root = ET.fromstring(svg_text(figure))
    nodes = [r for r in root.iter(f"{SVG}rect") if r.get("class") == "node"]
    assert len(nodes) == 3002 and nodes[1].get("data-id") == "m0<&\"'>"
    notes = " ".join(t.text for t in root.iter(f"{SVG}text") if t.get("class") == "note")
    assert notes == "TorchScript runs compiled & takes no hooks: the model is <one> node."
    scale, note = png_scale(figure, 4.0)
    assert max(figure.width, figure.height) * scale == pytest.approx(LONG_SIDE)
    assert figure.width * figure.height * scale * scale <= MOST_PIXELS
    assert note.startswith(f"the graph is {figure.width:.0f} x {figure.height:.0f} units: drawn at scale ")
    picture = png_image(figure, scale)
    assert max(picture.size) <= LONG_SIDE and picture.size[0] * picture.size[1] <= MOST_PIXELS
    assert isinstance(picture, Image.Image)


def test_a_large_square_figure_is_capped_by_its_area():
    figure = Figure(5000.0, 4000.0, (0.0, 0.0), (), ())
    scale, note = png_scale(figure, 8.0)
    assert figure.width * figure.height * scale * scale == pytest.approx(MOST_PIXELS)
    assert note == ("the graph is 5000 x 4000 units: drawn at scale 1.41, not 8 (7071 x 5657 pixels; at most 40 "
                    "million pixels and 32768 a side); write .svg, or close groups (--groups), for the whole graph "
                    "legible")


def test_text_is_fitted_to_its_room_by_one_rule():
    from inspector.core.graph.draw.look import fit_text

    def measure(text, size):  # 0.6 px a character per px of size
        return len(text) * size * 0.6

    assert fit_text("Conv2d", 11.0, 0.0, measure) == ("Conv2d", 11.0)  # no room given: as it is
    assert fit_text("Conv2d", 11.0, 40.0, measure) == ("Conv2d", 11.0)  # 39.6 fits
    text, size = fit_text("Conv2d", 11.0, 36.0, measure)  # 39.6 > 36: 11 * 36 / 39.6 = 10 px
    assert text == "Conv2d" and size == pytest.approx(10.0)
    text, size = fit_text("layer3.2.conv1", 10.0, 48.0, measure, "middle")  # 8 px at most 2 smaller: 10 characters
    assert size == 8.0 and text == "layer\u2026onv1" and measure(text, size) <= 48.0 < measure(text + "x", size)
    assert fit_text("layer3.2.conv1", 10.0, 48.0, measure)[0] == "layer3.2.\u2026"  # 10 characters of 4.8 px
