"""What every layout must hold, written once (the other layout tests call `assert_well_formed` and `assert_same_order`
on hand-built and recorded graphs), and tested here on layouts broken on purpose, so a check that passes means
something."""

from __future__ import annotations

import dataclasses

import pytest

from inspector.core.graph import Edge, Graph, Node
from inspector.core.graph.layout.graph_layout import Box, GraphLayout, Layout

EPS = 1e-6


def _overlap(a, b) -> bool:
    return a.x < b.x + b.width - EPS and b.x < a.x + a.width - EPS and a.y < b.y + b.height - EPS and \
        b.y < a.y + a.height - EPS


def _inside(a, f) -> bool:
    return f.x - EPS <= a.x and a.x + a.width <= f.x + f.width + EPS and f.y - EPS <= a.y and \
        a.y + a.height <= f.y + f.height + EPS


def assert_well_formed(layout: Layout) -> None:
    """Boxes are the closed view's nodes; every edge goes down (its source's box above its target's); no two
    boxes overlap; a box lies in the frame of every group it is in; sibling frames do not overlap and a frame
    holds no box of another level; each route runs from its source's bottom edge to its target's top edge;
    one route per tensor; everything lies within (0, 0, width, height)."""
    graph = layout.graph
    assert set(layout.boxes) == {n.id for n in graph.nodes}
    assert set(layout.frames) <= {g.id for g in graph.groups} and set(layout.frames) <= layout.open_groups
    assert {n.group for n in graph.nodes} - {""} <= set(layout.frames)
    for e in graph.edges:
        s, t = layout.boxes[e.source], layout.boxes[e.target]
        assert s.y + s.height <= t.y + EPS, f"{e.source} is not above {e.target}"
    boxes = sorted(layout.boxes.values(), key=lambda b: b.x)
    for i, a in enumerate(boxes):  # sweep in x: only boxes that start before `a` ends can overlap it
        for b in boxes[i + 1:]:
            if b.x >= a.x + a.width - EPS:
                break
            assert not _overlap(a, b), f"{a} overlaps {b}"
    for node in graph.nodes:
        group = node.group
        while group:
            assert _inside(layout.boxes[node.id], layout.frames[group]), f"{node.id} sticks out of {group}"
            group = graph.group(group).parent
    for a in layout.frames.values():
        ga = graph.group(a.id)
        for b in layout.frames.values():
            if a.id < b.id and graph.group(b.id).parent == ga.parent:
                assert not _overlap(a, b), f"frames {a.id} and {b.id} overlap"
        for node in graph.nodes:  # a box of the level around the frame stays out of it
            if node.group == ga.parent:
                assert not _overlap(a, layout.boxes[node.id]), f"{node.id} is inside frame {a.id}"
    tensors = {(e.source, e.target, e.index) for e in graph.edges}
    assert {(r.source, r.target, r.index) for r in layout.routes} == tensors
    assert len(layout.routes) == len(tensors)
    for r in layout.routes:
        s, t = layout.boxes[r.source], layout.boxes[r.target]
        (x0, y0), (x1, y1) = r.points[0], r.points[-1]
        assert y0 == pytest.approx(s.y + s.height) and s.x - EPS <= x0 <= s.x + s.width + EPS, r
        assert y1 == pytest.approx(t.y) and t.x - EPS <= x1 <= t.x + t.width + EPS, r
    for rect in [*layout.boxes.values(), *layout.frames.values()]:
        assert -EPS <= rect.x and rect.x + rect.width <= layout.width + EPS
        assert -EPS <= rect.y and rect.y + rect.height <= layout.height + EPS


def assert_same_order(before: Layout, after: Layout, ids) -> None:
    """The boxes `ids` keep their order: top to bottom (by their centres: boxes of one layer share a centre
    line) and, within one layer, left to right."""
    def centre(layout, i):
        b = layout.boxes.get(i) or layout.frames[i]
        return b.x + b.width / 2, b.y + b.height / 2

    ids = list(ids)
    for i in ids:
        for j in ids:
            (xi, yi), (xj, yj) = centre(before, i), centre(before, j)
            (ai, bi), (aj, bj) = centre(after, i), centre(after, j)
            if abs(yi - yj) > EPS:
                assert (yi < yj) == (bi < bj) and abs(bi - bj) > EPS, f"{i} and {j} swapped top to bottom"
            else:
                assert abs(bi - bj) < EPS, f"{i} and {j} left one layer"
                assert (xi < xj) == (ai < aj), f"{i} and {j} swapped left to right"


def _chain() -> Graph:
    return Graph((Node("input", "input", "input"), Node("conv", "module", "Conv2d", "conv"),
                  Node("output", "output", "output")),
                 (Edge("input", "conv", (1, 3), "float32"), Edge("conv", "output", (1, 3), "float32")))


def test_the_checks_pass_a_good_layout_and_catch_broken_ones():
    layout = GraphLayout(_chain()).layout()
    assert_well_formed(layout)
    conv = layout.boxes["conv"]
    broken = [
        {**layout.boxes, "conv": dataclasses.replace(conv, y=layout.boxes["input"].y)},  # overlaps, goes up
        {**layout.boxes, "output": Box("output", conv.x, conv.y + 5, 10, 10)},  # overlaps
    ]
    for boxes in broken:
        with pytest.raises(AssertionError):
            assert_well_formed(dataclasses.replace(layout, boxes=boxes))
    moved = dataclasses.replace(layout, routes=tuple(dataclasses.replace(r, points=((0.0, 0.0), *r.points[1:]))
                                                     for r in layout.routes))
    with pytest.raises(AssertionError):
        assert_well_formed(moved)
    swapped = {**layout.boxes, "input": dataclasses.replace(layout.boxes["input"], y=500.0)}
    with pytest.raises(AssertionError):
        assert_same_order(layout, dataclasses.replace(layout, boxes=swapped), ["input", "conv"])
