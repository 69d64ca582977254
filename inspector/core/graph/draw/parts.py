"""The shapes of one node, one open group's frame and one edge of a laid-out graph: the one definition of where
each part of the graph is drawn. The figures (`figure.draw_graph`, written as SVG and PNG) and the Graph tab's items
(`inspector.gui.views.graph.items`, painted by `graph_paint`) draw these lists; the app adds only what a figure
has no use for: the tree's tick box (at `tick_box`), the selection's and the edits' strokes, the edit badge.

Each function takes the rectangle it draws in, in the layout's scene units (the app's items pass their own, at
(0, 0)) and gives its shapes in the same units, back to front.

    node_parts(node, box.x, box.y, box.width, box.height)        # a closed group: its stack, box, label, +
    frame_parts(group, frame.x, frame.y, frame.width, frame.height)  # an open group: frame, title, -
    edge_parts(route.points, "a -> b", width=3.0)                 # the line and its arrowhead
    label_parts([r.points for r in routes_of_one_tensor], "1x64x56x56", "a")  # written once, below its source
"""

from __future__ import annotations

from typing import Sequence

from ..layout.text import LINE_HEIGHT, PAD, TICK, TITLE_HEIGHT, frame_title, node_label
from ..record.nodes import Group, Node
from .look import (BORDER, EDGE, FILL, FONT, FRAME_BORDER, FRAME_FILL, INK, LABEL, MUTED, SMALL, WHITE, Colour, Polygon,
                   Polyline, Rect, Shape, Text, corner, inks, shade, text_width)

Points = Sequence[tuple[float, float]]
EDGE_WIDTH = 1.2  # an edge's line where no overlay widens it
STACK = 3.0  # a closed group is drawn as a stack: a second box this far right and down, under it
OUTLINE = 4.0  # an outline (the first divergent node) this far outside the box
FRAME_CORNER = 6.0
BASELINE = FONT * 0.35  # from a line's middle to its baseline


def tick_box(width: float, height: float) -> tuple[float, float, float, float]:
    """Where a module's tick box is in a node's box of this size, from its top-left corner: (x, y, w, h)."""
    return PAD, (height - TICK) / 2, TICK, TICK


def toggle_box(width: float, height: float) -> tuple[float, float, float, float]:
    """Where a closed group's + is in its box, from its top-left corner."""
    return width - PAD - TICK, (height - TICK) / 2, TICK, TICK


def frame_toggle_box(width: float) -> tuple[float, float, float, float]:
    """Where an open group's - is in its frame's title band, from the frame's top-left corner."""
    return width - PAD - TICK, (TITLE_HEIGHT - TICK) / 2 + 1, TICK, TICK


def _toggle(x: float, y: float, opened: bool, role: str, id: str) -> list[Shape]:
    """A +/- in a TICK-sized square at (x, y): + opens a closed group, - closes an open one."""
    c, half = TICK / 2, TICK / 2 - 3
    shapes: list[Shape] = [Rect(x, y, TICK, TICK, WHITE, MUTED, 1.0, 0.0, role, id),
                           Polyline(((x + c - half, y + c), (x + c + half, y + c)), INK, 1.5, role, id)]
    if not opened:
        shapes.append(Polyline(((x + c, y + c - half), (x + c, y + c + half)), INK, 1.5, role, id))
    return shapes


def node_parts(node: Node, x: float, y: float, width: float, height: float, *, fill: Colour | None = None,
               stroke: tuple[Colour, float] | None = None, outline: tuple[Colour, float] | None = None) -> list[Shape]:
    """A node's shapes: a closed group's stack, the box (its kind's fill or `fill`, a border or `stroke` (colour,
    width)), its op (bold) and path centred in the room the layout left beside the tick box and the toggle, a
    closed group's +, and `outline` (colour, width) around it."""
    group = node.kind == "group"
    fill = fill or FILL.get(node.kind, FILL["function"])
    radius = corner(node.kind)
    shapes: list[Shape] = []
    if group:
        shapes.append(Rect(x + STACK, y + STACK, width, height, shade(fill), BORDER, 1.0, radius, "stack", node.id))
    colour, line = stroke or (BORDER, 1.5 if group else 1.0)
    shapes.append(Rect(x, y, width, height, fill, colour, line, radius, "node", node.id))
    left = x + PAD + (TICK + PAD if node.kind in ("module", "group") else 0.0)
    right = x + width - PAD - (TICK + PAD if group else 0.0)
    room, middle = max(right - left, 10.0), (left + right) / 2
    op, where = node_label(node)
    ink, muted = inks(fill)
    if where:
        top = y + (height - 2 * LINE_HEIGHT) / 2
        shapes.append(Text(middle, top + LINE_HEIGHT / 2 + BASELINE, op, FONT, ink, "middle", True, "label", node.id,
                           room))
        shapes.append(Text(middle, top + LINE_HEIGHT * 1.5 + BASELINE, where, FONT - 1, muted, "middle", False,
                           "label", node.id, room, "middle"))
    else:
        shapes.append(Text(middle, y + height / 2 + BASELINE, op, FONT, ink, "middle", True, "label", node.id, room))
    if group:
        tx, ty, _, _ = toggle_box(width, height)
        shapes += _toggle(x + tx, y + ty, False, "toggle", node.id)
    if outline is not None:
        shapes.append(Rect(x - OUTLINE, y - OUTLINE, width + 2 * OUTLINE, height + 2 * OUTLINE, None, outline[0],
                           outline[1], FRAME_CORNER, "outline", node.id))
    return shapes


def frame_parts(group: Group, x: float, y: float, width: float, height: float, *,
                stroke: tuple[Colour, float] | None = None) -> list[Shape]:
    """An open group's shapes: its frame (a border or `stroke`), its title in the band at the top (cut in the
    middle where too long) and its -."""
    colour, line = stroke or (FRAME_BORDER, 1.0)
    tx, ty, _, _ = frame_toggle_box(width)
    return [Rect(x, y, width, height, FRAME_FILL, colour, line, FRAME_CORNER, "frame", group.id),
            Text(x + PAD, y + TITLE_HEIGHT / 2 + 1 + BASELINE, frame_title(group), FONT, MUTED, "start", True,
                 "frame-title", group.id, width - 3 * PAD - TICK, "middle"),
            *_toggle(x + tx, y + ty, True, "frame-toggle", group.id)]


def arrow(points: Points, width: float) -> tuple[tuple[tuple[float, float], ...], tuple[tuple[float, float], ...]]:
    """The polyline shortened to its arrowhead's base, and the arrowhead (a triangle) at its last point."""
    (x0, y0), (x1, y1) = points[-2], points[-1]
    length = max(1e-9, ((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5)
    ux, uy = (x1 - x0) / length, (y1 - y0) / length
    size = min(6.0 + 1.5 * width, length)
    half = size * 0.45
    bx, by = x1 - ux * size, y1 - uy * size
    head = ((x1, y1), (bx - uy * half, by + ux * half), (bx + uy * half, by - ux * half))
    return (*map(tuple, points[:-1]), (bx, by)), head


def edge_parts(points: Points, id: str, *, width: float = EDGE_WIDTH, colour: Colour = EDGE) -> list[Shape]:
    """An edge's shapes: its line (`width` wide) and its arrowhead; nothing for a route of fewer than two points."""
    if len(points) < 2:
        return []
    line, head = arrow(points, width)
    return [Polyline(line, colour, width, "edge", id), Polygon(head, colour, "arrow", id)]


def label_at(routes: Sequence[Points]) -> tuple[float, float]:
    """Where a tensor's shape is written (its baseline's start): just below its source's box, right of where its
    edges leave and of each of them that runs off to the right (one label per tensor however many nodes read it;
    clear of the frames' titles, which are above boxes)."""
    x, y = routes[0][0]
    below = 2 + SMALL * 0.9  # within the padding of a frame the box is last in
    slopes = [(r[1][0] - x) / max(1e-9, r[1][1] - y) for r in routes if len(r) > 1]
    return x + 4 + min(60.0, max(0.0, *slopes) * (below + 1)), y + below


def label_parts(routes: Sequence[Points], text: str, id: str) -> list[Shape]:
    """A tensor's shape written once below its source (`routes`: the points of every edge that carries it), on a
    white band so that a line under it does not cross the text."""
    if not routes or len(routes[0]) < 1 or not text:
        return []
    x, y = label_at(routes)
    return [Rect(x - 2, y - SMALL, text_width(text, SMALL) + 4, SMALL + 3, WHITE, None, role="shape-back", id=id),
            Text(x, y, text, SMALL, LABEL, role="shape", id=id)]
