"""Where each node of a graph is drawn: a layered (Sugiyama) layout, top to bottom, one group at a time.

    from inspector.core.graph.layout.graph_layout import GraphLayout
    layouts = GraphLayout(graph)                 # the graph `record_graph` made
    top = layouts.layout()                       # every top-level group closed
    more = layouts.layout({"layer3", "layer3.2"})  # those groups open; the rest as it was

Torch-free and Qt-free (the worker lays a graph out; the view and the CLI's figures draw it). Coordinates are
scene units (pixels at zoom 1), y grows downwards, every rectangle is (x, y) of its top-left corner and its size,
as `QRectF(x, y, width, height)` takes it.

One group at a time, as Google's Model Explorer lays out large graphs: each level (what the model holds, what one
group holds) is ordered once by igraph's Sugiyama layout, on its own, with every group in it as one box
(`layout.levels`); a group drawn open is a frame as large as its inside laid out, and its level is placed again
with that box's size, its order kept (`layout.place`). So opening a group orders only its inside (the first time)
and moves the rest without reordering it; closing it gives back the layout it had. An edge that crosses a frame
is routed from its source's box through the frames' borders to its target's box, by the dummy vertices of each
level it runs in (`IN` and `OUT`, where it comes in and leaves). Boxes are sized from their text (`layout.text`).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from functools import cached_property
from typing import Iterable

from ...common.arguments import need_instance
from ..record.nodes import Graph, Node
from .levels import IN, OUT, TOP, LevelOrder, Levels, order_level
from .place import HGAP, Placement, place
from .text import FRAME_PAD, TITLE_HEIGHT, box_size, frame_size

PARALLEL = 6.0  # between the ends of two tensors drawn from one box to another


@dataclass(frozen=True)
class Placed:
    """Where something of the graph is drawn: its id and its rectangle (x, y its top left)."""

    id: str
    x: float
    y: float
    width: float
    height: float


@dataclass(frozen=True)
class Box(Placed):
    """One node as drawn (a module call, a function, the input or output, or a closed group)."""


@dataclass(frozen=True)
class Frame(Placed):
    """One open group drawn as a frame around what it holds (its title at the top, inside the frame)."""


@dataclass(frozen=True)
class Route:
    """One edge of the laid-out graph as a polyline from the bottom of its source to the top of its target."""

    source: str
    target: str
    index: int | None
    points: tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class Layout:
    """One view of a graph laid out: `graph` is the closed view drawn (`Graph.closed(open_groups)`)."""

    graph: Graph
    open_groups: frozenset[str]
    boxes: dict[str, Box]
    frames: dict[str, Frame]
    routes: tuple[Route, ...]
    width: float
    height: float

    def box_at(self, x: float, y: float) -> str | None:
        """The id of the node whose box holds the point, else of the innermost open group whose frame holds it."""
        for box in self.boxes.values():
            if box.x <= x <= box.x + box.width and box.y <= y <= box.y + box.height:
                return box.id
        hits = [f for f in self.frames.values() if f.x <= x <= f.x + f.width and f.y <= y <= f.y + f.height]
        return min(hits, key=lambda f: f.width * f.height).id if hits else None


class GraphLayout:
    """The layouts of one recorded graph, each group's inside laid out once and kept: opening or closing a
    group lays out only that group's inside (when not laid out before) and places the rest as it was."""

    def __init__(self, graph: Graph) -> None:
        need_instance(graph, Graph, "GraphLayout(): graph", "the Graph record_graph(model, x) returned")
        self.graph = graph
        self._orders: dict[str, LevelOrder] = {}
        self._units: dict[str, float] = {}
        self._placements: dict[tuple, Placement] = {}
        self._sizes: dict[str, tuple[float, float]] = {}  # a node's box, a group's closed

    @cached_property
    def levels(self) -> Levels:
        return Levels(self.graph)

    @cached_property
    def _groups(self) -> set[str]:
        return {g.id for g in self.graph.groups}

    def order(self, level: str) -> LevelOrder:
        """The layered order of one level ('' the top, else a group's id): computed once, the first time."""
        if level not in self._orders:
            members = self.levels.members.get(level, [])
            self._orders[level] = order_level(members, self.levels.edges.get(level, set()))
            widths = [self._closed_size(m)[0] for m in members]
            self._units[level] = (statistics.median(widths) if widths else 0.0) + HGAP
        return self._orders[level]

    def _closed_size(self, item: str) -> tuple[float, float]:
        size = self._sizes.get(item)
        if size is None:
            if item in self._groups:
                g = self.graph.group(item)
                size = box_size(Node(g.id, "group", g.type_name, g.path, g.call, g.parent))
            else:
                size = box_size(self.graph.node(item))
            self._sizes[item] = size
        return size

    def _opened(self, open_groups: Iterable[str]) -> frozenset[str]:
        """The groups drawn open: those asked for whose every outer group is open too."""
        asked = {g for g in open_groups if g in self._groups}
        return frozenset(g for g in asked if all(p in asked for p in self.levels.chain[g]))

    def _place(self, level: str, opened: frozenset[str], placed: dict[str, Placement]) -> Placement:
        """`level` placed with its open groups as frames (their insides placed first, into `placed`)."""
        order = self.order(level)
        sizes = {}
        for m in self.levels.members.get(level, []):
            if m in opened:
                inside = self._place(m, opened, placed)
                sizes[m] = frame_size(self.graph.group(m), (inside.width, inside.height))
        key = (level, tuple(sorted(sizes.items())))
        if key not in self._placements:
            self._placements[key] = place(order, lambda m: sizes.get(m) or self._closed_size(m), self._units[level])
        placed[level] = self._placements[key]
        return placed[level]

    def layout(self, open_groups: Iterable[str] = ()) -> Layout:
        """The graph with `open_groups` open (a group inside a closed one stays hidden) and every other closed."""
        opened = self._opened(open_groups)
        placed: dict[str, Placement] = {}
        top = self._place(TOP, opened, placed)
        boxes: dict[str, Box] = {}
        frames: dict[str, Frame] = {}
        origins: dict[str, tuple[float, float]] = {}
        todo = [(TOP, 0.0, 0.0)]
        while todo:
            level, ox, oy = todo.pop()
            origins[level] = (ox, oy)
            for m, (x, y, w, h) in placed[level].boxes.items():
                if m in opened:
                    frames[m] = Frame(m, ox + x, oy + y, w, h)
                    inside = placed[m]
                    todo.append((m, ox + x + (w - inside.width) / 2, oy + y + TITLE_HEIGHT + FRAME_PAD))
                else:
                    boxes[m] = Box(m, ox + x, oy + y, w, h)
        graph = self.graph.closed(opened)
        routes = _Router(self, placed, origins, boxes, frames).routes(graph)
        return Layout(graph, opened, boxes, frames, routes, top.width, top.height)


class _Router:
    """The routes of one layout's edges: from the source's box down through the frames it leaves (by the passing
    points of each level's edge to OUT, and the frame's bottom centre), the passing points of the level where the
    edge runs, and the frames it comes into (top centre, then the edge from IN), to the target's box."""

    def __init__(self, layouts: GraphLayout, placed: dict[str, Placement], origins: dict[str, tuple[float, float]],
                 boxes: dict[str, Box], frames: dict[str, Frame]) -> None:
        self.layouts, self.placed, self.origins, self.boxes, self.frames = layouts, placed, origins, boxes, frames

    def _bends(self, level: str, edge: tuple[str, str]) -> list[tuple[float, float]]:
        ox, oy = self.origins[level]
        bends = self.placed[level].bends
        points = []
        for slot in self.layouts.order(level).bends.get(edge, ()):
            x, top, bottom = bends[slot]
            points += [(ox + x, oy + top), (ox + x, oy + bottom)]
        return points

    def route(self, source: str, target: str, shift: float) -> tuple[tuple[float, float], ...]:
        levels = self.layouts.levels
        cs, ct = levels.chain[source], levels.chain[target]
        n = levels.common(source, target)
        sb, tb = self.boxes[source], self.boxes[target]
        points = [(sb.x + sb.width / 2 + max(-sb.width / 2, min(sb.width / 2, shift)), sb.y + sb.height)]
        for k in reversed(range(n, len(cs))):  # out of each frame the source lies in, innermost first
            points += self._bends(cs[k], (cs[k + 1] if k + 1 < len(cs) else source, OUT))
            f = self.frames[cs[k]]
            points.append((f.x + f.width / 2, f.y + f.height))
        u, v = (cs[n] if n < len(cs) else source), (ct[n] if n < len(ct) else target)
        points += self._bends(ct[n - 1] if n else TOP, (u, v))
        for k in range(n, len(ct)):  # into each frame the target lies in, outermost first
            f = self.frames[ct[k]]
            points.append((f.x + f.width / 2, f.y))
            points += self._bends(ct[k], (IN, ct[k + 1] if k + 1 < len(ct) else target))
        points.append((tb.x + tb.width / 2 + max(-tb.width / 2, min(tb.width / 2, shift)), tb.y))
        return tuple(p for i, p in enumerate(points) if i == 0 or p != points[i - 1])

    def routes(self, graph: Graph) -> tuple[Route, ...]:
        """One route per tensor (source, target, index); tensors between the same two boxes side by side."""
        tensors: dict[tuple[str, str], list[int | None]] = {}
        for e in graph.edges:
            indices = tensors.setdefault((e.source, e.target), [])
            if e.index not in indices:
                indices.append(e.index)
        routes = []
        for (source, target), indices in tensors.items():
            for i, index in enumerate(indices):
                shift = (i - (len(indices) - 1) / 2) * PARALLEL
                routes.append(Route(source, target, index, self.route(source, target, shift)))
        return tuple(routes)
