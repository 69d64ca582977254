"""The layout on graphs built by hand from the records (no torch): coordinates worked out on paper for a chain
and a group opened around one node, and the rules every layout holds (`test_layout_checks`) for every set of
open groups of a graph with two sibling groups, one nested."""

from __future__ import annotations

import itertools
import subprocess
import sys

import pytest
from test_layout_checks import assert_same_order, assert_well_formed

import inspector.core.graph.layout.graph_layout as layout_module
from inspector.core.graph import Edge, Graph, Group, Node
from inspector.core.graph.layout.graph_layout import Box, Frame, GraphLayout, Route
from inspector.core.graph.layout.place import spread
from inspector.core.graph.layout.text import box_size, frame_title, node_label

F32 = "float32"


def _edge(source: str, target: str, index: int | None = None) -> Edge:
    return Edge(source, target, (1, 4), F32, index)


def _chain() -> Graph:
    return Graph((Node("input", "input", "input"), Node("conv", "module", "Conv2d", "conv"),
                  Node("output", "output", "output")), (_edge("input", "conv"), _edge("conv", "output")))


def _one_group() -> Graph:
    return Graph((Node("input", "input", "input"), Node("g.a", "module", "Linear", "g.a", group="g"),
                  Node("output", "output", "output")), (_edge("input", "g.a"), _edge("g.a", "output")),
                 (Group("g", "g", "G", children=("g.a",)),))


def _two_blocks() -> Graph:
    """input -> blk (conv, and a residual add of the input) and head (mlp (fc1, relu), lin) side by side -> cat."""
    nodes = (Node("input", "input", "input"),
             Node("blk.conv", "module", "Conv2d", "blk.conv", group="blk"),
             Node("blk.add()", "function", "add", group="blk"),
             Node("head.mlp.fc1", "module", "Linear", "head.mlp.fc1", group="head.mlp"),
             Node("head.mlp.relu()", "function", "relu", group="head.mlp"),
             Node("head.lin", "module", "Linear", "head.lin", group="head"),
             Node("cat()", "function", "cat"),
             Node("output", "output", "output"))
    edges = (_edge("input", "blk.conv"), _edge("blk.conv", "blk.add()"), _edge("input", "blk.add()"),
             _edge("input", "head.mlp.fc1"), _edge("head.mlp.fc1", "head.mlp.relu()"),
             _edge("head.mlp.relu()", "head.lin"), _edge("blk.add()", "cat()"), _edge("head.lin", "cat()"),
             _edge("cat()", "output"))
    groups = (Group("blk", "blk", "Block", children=("blk.conv", "blk.add()")),
              Group("head", "head", "Head", children=("head.mlp", "head.lin")),
              Group("head.mlp", "head.mlp", "Mlp", parent="head", children=("head.mlp.fc1", "head.mlp.relu()")))
    return Graph(nodes, edges, groups)


def test_labels_and_box_sizes_by_hand():
    conv = Node("layer1.0.relu#1", "module", "ReLU", "layer1.0.relu", call=1, group="layer1.0")
    assert node_label(conv) == ("ReLU", "layer1.0.relu #1")
    assert node_label(Node("add_()", "function", "add", inplace=True)) == ("add_", "")
    assert node_label(Node("input", "input", "input")) == ("input", "")
    # 16 characters at 7 px, the text's padding (2 x 5), the tick box and its padding (12 + 5); two lines
    assert box_size(conv) == (16 * 7 + 10 + 17, 2 * 14 + 10 + 2)
    assert box_size(Node("input", "input", "input")) == (48, 24)  # the least width; one line
    assert box_size(Node("g", "group", "G", "g")) == (7 + 10 + 17 + 17, 40)  # a group has a toggle too
    assert frame_title(Group("head.mlp", "head.mlp", "Mlp", call=2)) == "head.mlp #2  (Mlp)"
    assert frame_title(Group("t.post(...)", "t", "T", method="post")) == "t.post(...)  (T)"


def test_a_chain_by_hand():
    """Boxes 48, 69 and 52 wide, centred on one line; layers 40 apart; the widest box at x = 0."""
    layout = GraphLayout(_chain()).layout()
    assert layout.boxes == {"input": Box("input", 10.5, 0.0, 48, 24), "conv": Box("conv", 0.0, 64.0, 69, 40),
                            "output": Box("output", 8.5, 144.0, 52, 24)}
    assert layout.frames == {}
    assert layout.routes == (Route("input", "conv", None, ((34.5, 24.0), (34.5, 64.0))),
                             Route("conv", "output", None, ((34.5, 104.0), (34.5, 144.0))))
    assert (layout.width, layout.height) == (69, 168)
    assert layout.open_groups == frozenset() and layout.graph == _chain()
    assert_well_formed(layout)


def test_one_group_open_by_hand():
    """g's inside is its one box (69 x 40); its frame adds 12 on each side and a 24 title band: 93 x 88. Routes
    cross the frame's border at its top and bottom centre."""
    layouts = GraphLayout(_one_group())
    closed = layouts.layout()
    assert closed.boxes["g"] == Box("g", 0.5, 64.0, 51, 40) and closed.frames == {}  # output (52) is wider
    opened = layouts.layout({"g"})
    assert opened.frames == {"g": Frame("g", 0.0, 64.0, 93, 88)}
    assert opened.boxes == {"input": Box("input", 22.5, 0.0, 48, 24), "g.a": Box("g.a", 12.0, 100.0, 69, 40),
                            "output": Box("output", 20.5, 192.0, 52, 24)}
    assert opened.routes == (Route("input", "g.a", None, ((46.5, 24.0), (46.5, 64.0), (46.5, 100.0))),
                             Route("g.a", "output", None, ((46.5, 140.0), (46.5, 152.0), (46.5, 192.0))))
    assert (opened.width, opened.height) == (93, 216)
    assert_well_formed(opened)


def test_a_one_node_graph_and_an_empty_one():
    graph = Graph((Node("(model)", "module", "RecursiveScriptModule"),), ())
    layout = GraphLayout(graph).layout()
    w, h = box_size(graph.nodes[0])
    assert layout.boxes == {"(model)": Box("(model)", 0.0, 0.0, w, h)}
    assert layout.routes == () and (layout.width, layout.height) == (w, h)
    empty = GraphLayout(Graph((), ())).layout()
    assert (empty.boxes, empty.frames, empty.routes, empty.width, empty.height) == ({}, {}, (), 0.0, 0.0)


def _open_sets(graph: Graph):
    ids = [g.id for g in graph.groups]
    return [set(c) for n in range(len(ids) + 1) for c in itertools.combinations(ids, n)]


@pytest.mark.parametrize("opened", _open_sets(_two_blocks()), ids=lambda s: ",".join(sorted(s)) or "closed")
def test_every_open_set_is_well_formed(opened):
    layout = GraphLayout(_two_blocks()).layout(opened)
    assert layout.graph == _two_blocks().closed(opened)
    assert_well_formed(layout)


def test_no_open_group_is_the_closed_view():
    graph = _two_blocks()
    layout = GraphLayout(graph).layout()
    assert layout.graph == graph.closed() and set(layout.boxes) == {"input", "blk", "head", "cat()", "output"}
    assert layout.open_groups == frozenset()
    # a group inside a closed one stays hidden, and an unknown id is not a group
    hidden = GraphLayout(graph).layout({"head.mlp", "nothing", "input"})
    assert hidden.open_groups == frozenset() and hidden.boxes == layout.boxes and hidden.routes == layout.routes


def test_opening_keeps_the_rest_in_order_and_closing_gives_the_first_layout_back():
    layouts = GraphLayout(_two_blocks())
    first = layouts.layout()
    top = list(first.boxes)
    for group in ("blk", "head"):
        opened = layouts.layout({group})
        assert_same_order(first, opened, top)
        assert layouts.layout() == first
    deeper = layouts.layout({"head", "head.mlp"})
    assert_same_order(layouts.layout({"head"}), deeper, ["input", "blk", "head.lin", "cat()", "output"])
    assert layouts.layout({"head"}) == layouts.layout({"head"}) and layouts.layout(()) == first
    assert GraphLayout(_two_blocks()).layout({"head", "head.mlp"}) == deeper  # as a fresh layout draws it


def test_a_group_is_ordered_once(monkeypatch):
    calls = []
    original = layout_module.order_level

    def counted(members, edges, *args):
        calls.append(tuple(members))
        return original(members, edges, *args)

    monkeypatch.setattr(layout_module, "order_level", counted)
    layouts = GraphLayout(_two_blocks())
    for opened in [(), {"head"}, (), {"head"}, {"head", "head.mlp"}, {"blk"}, {"head", "head.mlp"}, ()]:
        layouts.layout(opened)
    assert calls == [("input", "blk", "head", "cat()", "output"), ("head.mlp", "head.lin"),
                     ("head.mlp.fc1", "head.mlp.relu()"), ("blk.conv", "blk.add()")]


def test_an_edge_into_an_open_group_runs_through_its_frame_top_and_beside_the_boxes():
    """input -> blk.add() skips blk.conv: inside blk it passes blk.conv's layer by a point beside it."""
    layout = GraphLayout(_two_blocks()).layout({"blk"})
    frame, conv = layout.frames["blk"], layout.boxes["blk.conv"]
    route = next(r for r in layout.routes if (r.source, r.target) == ("input", "blk.add()"))
    assert (frame.x + frame.width / 2, frame.y) in route.points
    passing = [(x, y) for x, y in route.points[1:-1] if conv.y <= y <= conv.y + conv.height]
    assert passing and all(not conv.x <= x <= conv.x + conv.width for x, _ in passing)
    assert all(frame.x <= x <= frame.x + frame.width for x, _ in passing)


def test_tensors_between_the_same_two_boxes_are_drawn_side_by_side():
    nodes = (Node("input", "input", "input"), Node("chunk()", "function", "chunk"), Node("cat()", "function", "cat"),
             Node("output", "output", "output"))
    edges = (_edge("input", "chunk()"), _edge("chunk()", "cat()", 0), _edge("chunk()", "cat()", 1),
             _edge("cat()", "output"), _edge("cat()", "output"))  # the last twice: drawn once
    layout = GraphLayout(Graph(nodes, edges)).layout()
    pair = [r for r in layout.routes if r.source == "chunk()"]
    assert [r.index for r in pair] == [0, 1]
    assert pair[1].points[0][0] - pair[0].points[0][0] == pytest.approx(6.0)
    assert len([r for r in layout.routes if r.source == "cat()"]) == 1
    assert_well_formed(layout)


def test_box_at_finds_a_node_then_the_innermost_frame():
    layout = GraphLayout(_two_blocks()).layout({"head", "head.mlp"})
    fc1 = layout.boxes["head.mlp.fc1"]
    assert layout.box_at(fc1.x + 1, fc1.y + 1) == "head.mlp.fc1"
    mlp, head = layout.frames["head.mlp"], layout.frames["head"]
    assert layout.box_at(mlp.x + 1, mlp.y + 1) == "head.mlp"
    assert layout.box_at(head.x + 1, head.y + 1) == "head"
    assert layout.box_at(-50, -50) is None


def test_the_layout_imports_no_torch():
    code = "import sys, inspector.core.graph.layout.graph_layout; assert 'torch' not in sys.modules, 'torch'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_spread_by_hand():
    """Centres in order, at least half of each width and the gap apart, nearest (least squares) to the desired."""
    assert spread([0.0, 100.0], [10.0, 10.0], 4.0) == [0.0, 100.0]  # far enough apart already
    assert spread([0.0, 0.0], [10.0, 10.0], 4.0) == [-7.0, 7.0]  # pushed apart evenly
    assert spread([0.0, 0.0, 0.0], [10.0, 10.0, 10.0], 0.0) == [-10.0, 0.0, 10.0]
    # 20 apart at least, their mean (0.5) kept; the third is far enough already
    assert spread([0.0, 1.0, 50.0], [10.0, 30.0, 10.0], 0.0) == [-9.5, 10.5, 50.0]
    assert spread([], [], 4.0) == []


def test_a_node_that_reads_nothing_stands_just_above_its_reader():
    """`arange()` ran second but reads no tensor: it goes to the layer above the add that reads it, beside `b`."""
    nodes = (Node("input", "input", "input"), Node("arange()", "function", "arange"),
             Node("a", "module", "Linear", "a"), Node("b", "module", "Linear", "b"), Node("add()", "function", "add"),
             Node("output", "output", "output"))
    edges = (_edge("input", "a"), _edge("a", "b"), _edge("b", "add()"), _edge("arange()", "add()"),
             _edge("add()", "output"))
    layout = GraphLayout(Graph(nodes, edges)).layout()
    centre = {i: b.y + b.height / 2 for i, b in layout.boxes.items()}
    assert centre["arange()"] == centre["b"] and centre["a"] < centre["b"] < centre["add()"]
    assert_well_formed(layout)
