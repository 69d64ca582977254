"""A laid-out graph as a figure: plain shapes (rectangles, polylines, polygons, text), built once from a `Layout`
so that every writer draws the same thing (`draw.svg`, `draw.png`, the app's Save figure). Each node's, frame's and
edge's shapes are `draw.parts`', the very shapes the Graph tab paints.

    layout = GraphLayout(graph).layout(graph.groups_within(1))
    figure = draw_graph(layout, title=graph.caption)          # the graph as the view shows it, uncoloured
    figure = draw_graph(layout, overlay_of(values.for_view(layout.graph), "gradient"))  # coloured (draw_values)

Torch-free and Qt-free. The palette and the shapes are `draw.look`'s (named here too). The graph's shapes are in the layout's scene units (`graph_items`, placed at `origin`
in the figure); the title above it, the colour bar and the notes below are in figure units (`items`). Text is
sized as the view's (`layout.text`: 11 px at zoom 1); its width is estimated, as the layout estimates it.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping

from ..layout.text import FRAME_PAD, LINE_HEIGHT
from .look import (ALARM, BORDER, DIVERGENT, EDGE, FILL, FONT, FRAME_BORDER, FRAME_FILL, INK, LABEL, MUTED,
                   MUTED_ON_DARK, SMALL, WHITE, Anchor, Colour, Polygon, Polyline, Rect, Shape, Text, corner, inks,
                   shade, shape_label, text_width)
from .parts import EDGE_WIDTH, edge_parts, frame_parts, label_parts, node_parts

if TYPE_CHECKING:
    from ..layout.graph_layout import Layout

__all__ = ["ALARM", "BORDER", "DIVERGENT", "EDGE", "FILL", "FONT", "FRAME_BORDER", "FRAME_FILL", "INK", "LABEL",
           "MUTED", "MUTED_ON_DARK", "SMALL", "WHITE", "Colour", "ColourBar", "Figure", "Overlay", "Polygon",
           "Polyline", "Rect", "Shape", "Text", "corner", "draw_graph", "inks", "shade", "shape_label", "text_width"]

TITLE = 14.0  # the figure's title (the graph's caption)
MARGIN = 16.0
MIN_WIDTH = 360.0  # a figure's content is at least this wide, so its title is not wrapped to a few words
BAR_WIDTH, BAR_HEIGHT, BAR_STEPS = 240.0, 12.0, 64


@dataclass(frozen=True)
class ColourBar:
    """What the node colours mean: `colours` from the lowest value to the highest, `ticks` (fraction along the
    bar, label), `title` above it."""

    title: str
    colours: tuple[Colour, ...]
    ticks: tuple[tuple[float, str], ...]


@dataclass(frozen=True)
class Overlay:
    """What is drawn over the plain graph: node fills by id, edge widths by (source, target, index), the node
    drawn in alarm red and the path to it outlined, the colour bar, lines for the figure's foot, and the node
    outlined in DIVERGENT (a comparison's first divergent node)."""

    fills: Mapping[str, Colour] = field(default_factory=dict)
    edge_widths: Mapping[tuple[str, str, int | None], float] = field(default_factory=dict)
    alarm: str | None = None
    path: tuple[str, ...] = ()
    bar: ColourBar | None = None
    legend: tuple[str, ...] = ()
    outline: str | None = None


@dataclass(frozen=True)
class Figure:
    """What a writer draws: `width` x `height` figure units on `background`; `graph_items` in scene units,
    their (0, 0) at `origin`; `items` in figure units. `title`: the figure's name (the SVG's <title>)."""

    width: float
    height: float
    origin: tuple[float, float]
    graph_items: tuple[Shape, ...]
    items: tuple[Shape, ...]
    title: str = ""
    background: Colour = WHITE


def _graph_shapes(layout: Layout, overlay: Overlay) -> list[Shape]:
    """Every frame (outer first), edge with its tensor's shape (once per tensor) and node, as `draw.parts` draws
    them, with the overlay's fills, widths, alarm, path and outline."""
    graph = layout.graph
    shapes: list[Shape] = []
    for frame in sorted(layout.frames.values(), key=lambda f: graph.depth(f.id)):  # outer frames first
        shapes += frame_parts(graph.group(frame.id), frame.x, frame.y, frame.width, frame.height)
    edges = {(e.source, e.target, e.index): e for e in graph.edges}
    on_path = set(zip(overlay.path, overlay.path[1:]))
    leaving: dict[str, list] = {}  # a tensor ("source" or "source[index]") -> the routes that carry it
    for route in layout.routes:
        leaving.setdefault(route.source + ("" if route.index is None else f"[{route.index}]"), []).append(route)
    labelled: set[str] = set()
    for route in layout.routes:
        key = (route.source, route.target, route.index)
        alarm = (route.source, route.target) in on_path
        width = overlay.edge_widths.get(key, EDGE_WIDTH) + (1.0 if alarm else 0.0)
        shapes += edge_parts(route.points, f"{route.source} -> {route.target}", width=width,
                             colour=ALARM if alarm else EDGE)
        edge = edges.get(key)
        tensor = route.source + ("" if route.index is None else f"[{route.index}]")
        if edge is not None and tensor not in labelled and len(route.points) >= 2:
            labelled.add(tensor)
            shapes += label_parts([r.points for r in leaving[tensor]], shape_label(edge.shape, edge.dtype), tensor)
    outlined = set(overlay.path)
    for node in graph.nodes:
        box = layout.boxes.get(node.id)
        if box is None:
            continue
        fill = ALARM if node.id == overlay.alarm else overlay.fills.get(node.id)
        shapes += node_parts(node, box.x, box.y, box.width, box.height, fill=fill,
                             stroke=(ALARM, 3.0) if node.id in outlined else None,
                             outline=(DIVERGENT, 4.0) if node.id == overlay.outline else None)
    return shapes


def _lines(text: str, size: float, width: float) -> list[str]:
    chars = max(20, int(width / (size * 7.0 / 11.0)))
    return textwrap.wrap(text, chars) or [""]


def _bar_shapes(bar: ColourBar, x: float, y: float, width: float) -> tuple[list[Shape], float]:
    """The colour bar with its title above (wrapped to `width`) and its ticks below, from (x, y); and the height it
    takes."""
    titles = _lines(bar.title, FONT, width)
    shapes: list[Shape] = [Text(x, y + FONT + k * LINE_HEIGHT, line, FONT, INK, role="bar-title")
                           for k, line in enumerate(titles)]
    y += (len(titles) - 1) * LINE_HEIGHT
    top = y + FONT + 6
    step = BAR_WIDTH / BAR_STEPS
    for k in range(BAR_STEPS):
        colour = bar.colours[min(len(bar.colours) - 1, int(k * len(bar.colours) / BAR_STEPS))]
        shapes.append(Rect(x + k * step, top, step + 0.5, BAR_HEIGHT, colour, role="bar"))
    shapes.append(Rect(x, top, BAR_WIDTH, BAR_HEIGHT, None, BORDER, 1.0, role="bar-frame"))
    for k, (at, label) in enumerate(bar.ticks):
        tx = x + at * BAR_WIDTH
        shapes.append(Polyline(((tx, top + BAR_HEIGHT), (tx, top + BAR_HEIGHT + 4)), BORDER, 1.0, "tick"))
        anchor: Anchor = "start" if at <= 0 else "end" if at >= 1 else "middle"
        shapes.append(Text(tx, top + BAR_HEIGHT + 6 + 10, label, 10.0, INK, anchor, role="tick-label"))
    return shapes, (len(titles) - 1) * LINE_HEIGHT + FONT + 6 + BAR_HEIGHT + 6 + 13


def draw_graph(layout: Layout, overlay: Overlay | None = None, *, title: str | None = None, subtitle: str = "",
               notes: tuple[str, ...] | None = None) -> Figure:
    """The figure of `layout`: nodes as rounded boxes with their label's two lines, open groups as frames with
    their titles, edges as polylines with arrowheads, each tensor's shape written once below its source; `title` (default: the graph's
    caption) and `subtitle` above, with the overlay's colour bar; `notes` (default: the graph's, e.g. TorchScript
    as one node) and the overlay's legend in the foot."""
    overlay = overlay or Overlay()
    graph = layout.graph
    title = graph.caption if title is None else title
    notes = graph.notes if notes is None else notes
    content = max(layout.width, MIN_WIDTH)
    items: list[Shape] = []
    y = MARGIN
    for line in _lines(title, TITLE, content):
        items.append(Text(MARGIN, y + TITLE, line, TITLE, INK, bold=True, role="title"))
        y += TITLE + 5
    for line in _lines(subtitle, FONT, content) if subtitle else []:
        items.append(Text(MARGIN, y + FONT + 2, line, FONT, MUTED, role="subtitle"))
        y += LINE_HEIGHT + 1
    if overlay.bar is not None:
        shapes, height = _bar_shapes(overlay.bar, MARGIN, y + 6, content)
        items += shapes
        y += 6 + height
    origin = (MARGIN + (content - layout.width) / 2, y + FRAME_PAD)
    y = origin[1] + layout.height + FRAME_PAD
    for note in (*overlay.legend, *notes):
        for line in _lines(note, FONT - 1, content):
            items.append(Text(MARGIN, y + FONT, line, FONT - 1, MUTED, role="note"))
            y += LINE_HEIGHT
    return Figure(content + 2 * MARGIN, y + MARGIN, origin, tuple(_graph_shapes(layout, overlay)), tuple(items), title)
