"""Where each node of a graph is drawn: a layered (Sugiyama) layout, top to bottom, one group at a time.

    from inspector.core.graph.layout import GraphLayout
    layouts = GraphLayout(graph)                 # the graph `record_graph` made
    top = layouts.layout()                       # every top-level group closed
    more = layouts.layout({"layer3", "layer3.2"})  # those groups open; the rest as it was

Torch-free and Qt-free (the worker lays a graph out; the view and the CLI's figures draw it). Coordinates are
scene units (pixels at zoom 1), y grows downwards, every rectangle is (x, y) of its top-left corner and its size,
as `QRectF(x, y, width, height)` takes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from .model import Graph


@dataclass(frozen=True)
class Box:
    """One node as drawn (a module call, a function, the input or output, or a closed group)."""

    id: str
    x: float
    y: float
    width: float
    height: float


@dataclass(frozen=True)
class Frame:
    """One open group drawn as a frame around what it holds (its title at the top, inside the frame)."""

    id: str
    x: float
    y: float
    width: float
    height: float


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


class GraphLayout:
    """The layouts of one recorded graph, each group's inside laid out once and kept: opening or closing a
    group lays out only that group's inside (when not laid out before) and places the rest as it was."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph

    def layout(self, open_groups: Iterable[str] = ()) -> Layout:
        raise NotImplementedError("the layout lands with issue 42 item 2")
