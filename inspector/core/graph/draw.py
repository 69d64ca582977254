"""A laid-out graph as a figure: plain shapes (rectangles, polylines, polygons, text), built once from a `Layout`
so that every writer draws the same thing (`draw_svg`, `draw_png`; the app's Save figure can reuse it).

    layout = GraphLayout(graph).layout(graph.groups_within(1))
    figure = draw_graph(layout, title=graph.caption)          # the graph as the view shows it, uncoloured
    figure = draw_graph(layout, overlay_of(values.for_view(layout.graph), "gradient"))  # coloured (draw_values)

Torch-free and Qt-free. The graph's shapes are in the layout's scene units (`graph_items`, placed at `origin`
in the figure); the title above it, the colour bar and the notes below are in figure units (`items`). Text is
sized as the view's (`layout_text`: 11 px at zoom 1); its width is estimated, as the layout estimates it.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Mapping, Union

from .layout_text import FRAME_PAD, LINE_HEIGHT, PAD, TITLE_HEIGHT, frame_title, node_label

if TYPE_CHECKING:
    from .layout import Layout

Colour = tuple[int, int, int]
Anchor = Literal["start", "middle", "end"]

# The graph's colours, one definition: the figures draw with them and the Graph tab's items
# (inspector.gui.views.graph_items) take them from here.
FILL: dict[str, Colour] = {"module": (222, 235, 250), "function": (238, 238, 238), "input": (214, 240, 214),
                           "output": (214, 240, 214), "group": (196, 214, 238)}
BORDER: Colour = (120, 130, 145)
FRAME_FILL: Colour = (246, 249, 253)
FRAME_BORDER: Colour = (150, 170, 200)
EDGE: Colour = (105, 110, 120)
LABEL: Colour = (70, 75, 85)
MUTED: Colour = (90, 95, 105)
INK: Colour = (20, 22, 26)
WHITE: Colour = (255, 255, 255)
MUTED_ON_DARK: Colour = (215, 218, 225)  # a node's path on a dark overlay colour
ALARM: Colour = (214, 39, 40)  # the first node that made NaN or Inf, and the path from the input to it
DIVERGENT: Colour = (200, 0, 160)  # the first divergent node's outline: not the alarm's red, not the selection's blue

FONT = 11.0  # a node's label, a frame's title
SMALL = 9.0  # the shape written on an edge
TITLE = 14.0  # the figure's title (the graph's caption)
MARGIN = 16.0
MIN_WIDTH = 360.0  # a figure's content is at least this wide, so its title is not wrapped to a few words
BAR_WIDTH, BAR_HEIGHT, BAR_STEPS = 240.0, 12.0, 64


def text_width(text: str, size: float) -> float:
    """Estimated width of `text` at `size` px (the layout's estimate, 7 px a character at 11 px)."""
    return len(text) * size * 7.0 / 11.0


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    width: float
    height: float
    fill: Colour | None
    stroke: Colour | None = None
    stroke_width: float = 1.0
    radius: float = 0.0
    role: str = ""  # what it draws: node, frame, bar, ... (the SVG's class)
    id: str = ""  # the node's or group's id


@dataclass(frozen=True)
class Polyline:
    points: tuple[tuple[float, float], ...]
    stroke: Colour
    width: float = 1.0
    role: str = "edge"
    id: str = ""  # an edge's: "source -> target"


@dataclass(frozen=True)
class Polygon:
    points: tuple[tuple[float, float], ...]
    fill: Colour
    role: str = "arrow"
    id: str = ""


@dataclass(frozen=True)
class Text:
    """One line of text; `y` is its baseline, `x` its start, middle or end (`anchor`)."""

    x: float
    y: float
    text: str
    size: float
    fill: Colour = INK
    anchor: Anchor = "start"
    bold: bool = False
    role: str = ""
    id: str = ""


Shape = Union[Rect, Polyline, Polygon, Text]


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


def corner(kind: str) -> float:
    """A node's corner radius: round for a function and the model's input and output, squarer for a module."""
    return 10.0 if kind in ("function", "input", "output") else 4.0


def inks(fill: Colour) -> tuple[Colour, Colour]:
    """A node's op and path colours on `fill`: dark and grey on a light box, white and light grey on a dark one
    (the values overlay's dark end: dark text on it could not be read)."""
    r, g, b = fill
    return (INK, MUTED) if 0.299 * r + 0.587 * g + 0.114 * b >= 127.5 else (WHITE, MUTED_ON_DARK)


def shape_label(shape: tuple[int, ...], dtype: str) -> str:
    """What an edge says: its shape (`1x64x56x56`, `scalar`), and its dtype when not float32."""
    return ("x".join(map(str, shape)) or "scalar") + ("" if dtype == "float32" else f" {dtype}")


def _arrow(points: tuple[tuple[float, float], ...], width: float):
    """The polyline shortened to the arrowhead's base, and the arrowhead at its last point."""
    (x0, y0), (x1, y1) = points[-2], points[-1]
    length = max(1e-9, ((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5)
    ux, uy = (x1 - x0) / length, (y1 - y0) / length
    size = min(6.0 + 1.5 * width, length)
    half = size * 0.45
    bx, by = x1 - ux * size, y1 - uy * size
    head = ((x1, y1), (bx - uy * half, by + ux * half), (bx + uy * half, by - ux * half))
    return (*points[:-1], (bx, by)), head


def _label_at(routes: list) -> tuple[float, float]:
    """Where a tensor's shape is written: just below its source's box, right of where its edges leave and of each
    of them that runs off to the right (one label per tensor however many nodes read it; clear of the frames'
    titles, which are above boxes)."""
    x, y = routes[0].points[0]
    below = 2 + SMALL * 0.9  # the baseline: within the padding of a frame the box is last in
    slopes = [(r.points[1][0] - x) / max(1e-9, r.points[1][1] - y) for r in routes if len(r.points) > 1]
    return x + 4 + min(60.0, max(0.0, *slopes) * (below + 1)), y + below


def _graph_shapes(layout: Layout, overlay: Overlay) -> list[Shape]:
    graph = layout.graph
    shapes: list[Shape] = []
    for frame in sorted(layout.frames.values(), key=lambda f: graph.depth(f.id)):  # outer frames first
        shapes.append(Rect(frame.x, frame.y, frame.width, frame.height, FRAME_FILL, FRAME_BORDER, 1.0, 6.0,
                           "frame", frame.id))
        shapes.append(Text(frame.x + PAD + 2, frame.y + TITLE_HEIGHT / 2 + FONT * 0.35,
                           frame_title(graph.group(frame.id)), FONT, MUTED, bold=True, role="frame-title", id=frame.id))
    edges = {(e.source, e.target, e.index): e for e in graph.edges}
    on_path = set(zip(overlay.path, overlay.path[1:]))
    labelled: set[str] = set()
    leaving: dict[str, list] = {}  # a tensor ("source" or "source[index]") -> the routes that carry it
    for route in layout.routes:
        leaving.setdefault(route.source + ("" if route.index is None else f"[{route.index}]"), []).append(route)
    for route in layout.routes:
        if len(route.points) < 2:
            continue
        key = (route.source, route.target, route.index)
        alarm = (route.source, route.target) in on_path
        width = overlay.edge_widths.get(key, 1.0) + (1.0 if alarm else 0.0)
        colour = ALARM if alarm else EDGE
        name = f"{route.source} -> {route.target}"
        line, head = _arrow(route.points, width)
        shapes.append(Polyline(line, colour, width, "edge", name))
        shapes.append(Polygon(head, colour, "arrow", name))
        edge = edges.get(key)
        tensor = route.source + ("" if route.index is None else f"[{route.index}]")
        if edge is not None and tensor not in labelled:
            labelled.add(tensor)
            x, y = _label_at(leaving[tensor])
            shapes.append(Text(x, y, shape_label(edge.shape, edge.dtype), SMALL, LABEL, role="shape", id=tensor))
    outlined = set(overlay.path)
    for node in graph.nodes:
        box = layout.boxes.get(node.id)
        if box is None:
            continue
        fill = ALARM if node.id == overlay.alarm else overlay.fills.get(node.id, FILL.get(node.kind, FILL["function"]))
        stroke, width = (ALARM, 3.0) if node.id in outlined else (BORDER, 1.5 if node.kind == "group" else 1.0)
        shapes.append(Rect(box.x, box.y, box.width, box.height, fill, stroke, width, corner(node.kind), "node",
                           node.id))
        if node.id == overlay.outline:
            shapes.append(Rect(box.x - 4, box.y - 4, box.width + 8, box.height + 8, None, DIVERGENT, 4.0, 6.0,
                               "outline", node.id))
        op, where = node_label(node)
        ink, muted = inks(fill)
        cx = box.x + box.width / 2
        if where:
            top = box.y + (box.height - 2 * LINE_HEIGHT) / 2
            shapes.append(Text(cx, top + LINE_HEIGHT / 2 + FONT * 0.35, op, FONT, ink, "middle", True, "label", node.id))
            shapes.append(Text(cx, top + LINE_HEIGHT * 1.5 + FONT * 0.35, where, FONT - 1, muted, "middle", False,
                               "label", node.id))
        else:
            shapes.append(Text(cx, box.y + box.height / 2 + FONT * 0.35, op, FONT, ink, "middle", True, "label",
                               node.id))
        if node.kind == "group":  # a closed group: a + where the view has its toggle
            s, x, y = 8.0, box.x + box.width - PAD - 8.0, box.y + PAD
            shapes.append(Rect(x, y, s, s, WHITE, BORDER, 1.0, 1.0, "toggle", node.id))
            shapes.append(Polyline(((x + 2, y + s / 2), (x + s - 2, y + s / 2)), INK, 1.0, "toggle", node.id))
            shapes.append(Polyline(((x + s / 2, y + 2), (x + s / 2, y + s - 2)), INK, 1.0, "toggle", node.id))
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
