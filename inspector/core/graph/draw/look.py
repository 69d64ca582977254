"""How the graph looks, one definition for the figures and the app: its palette, its font sizes, the plain shapes
every writer draws (rectangles, polylines, polygons, one line of text) and the small rules on them (a node's
corner, the ink on a fill, a darker shade, what an edge says).

Torch-free and Qt-free: `draw.parts` makes each node's, frame's and edge's shapes from these; `draw` puts them in
a figure (`draw.svg`, `draw.png`), and the Graph tab's items paint the same shapes with Qt
(`inspector.gui.views.graph.paint`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Union

from ..layout.text import CHAR_WIDTH, FONT_PX

Colour = tuple[int, int, int]
Anchor = Literal["start", "middle", "end"]

# The graph's colours, one definition: the figures draw with them and the Graph tab's items
# (inspector.gui.views.graph.items) take them from here.
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
    """Estimated width of `text` at `size` px: the layout's estimate (`layout.text.CHAR_WIDTH` at its font), scaled."""
    return len(text) * CHAR_WIDTH * size / FONT_PX


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
    room: float = 0.0  # the width it may take (0: any); a writer that can measure text shrinks or cuts it to fit
    elide: Literal["right", "middle"] = "right"  # where it is cut


Shape = Union[Rect, Polyline, Polygon, Text]


def corner(kind: str) -> float:
    """A node's corner radius: round for a function and the model's input and output, squarer for a module."""
    return 10.0 if kind in ("function", "input", "output") else 4.0


def inks(fill: Colour) -> tuple[Colour, Colour]:
    """A node's op and path colours on `fill`: dark and grey on a light box, white and light grey on a dark one
    (the values overlay's dark end: dark text on it could not be read)."""
    r, g, b = fill
    return (INK, MUTED) if 0.299 * r + 0.587 * g + 0.114 * b >= 127.5 else (WHITE, MUTED_ON_DARK)


def shade(colour: Colour, factor: float = 1.12) -> Colour:
    """`colour` darker by `factor` (its value divided, hue and saturation kept: Qt's `QColor.darker(112)`)."""
    return tuple(round(c / factor) for c in colour)  # type: ignore[return-value]


def shape_label(shape: tuple[int, ...], dtype: str) -> str:
    """What an edge says: its shape (`1x64x56x56`, `scalar`), and its dtype when not float32."""
    return ("x".join(map(str, shape)) or "scalar") + ("" if dtype == "float32" else f" {dtype}")


def fit_text(text: str, size: float, room: float, measure, elide: str = "right", least: float = 2.0) -> tuple[str, float]:
    """`text` and its size to fit `room` as measured by `measure(text, size)` (a writer's own font): as it is where
    it fits (or `room` is 0), else up to `least` smaller, else cut with an ellipsis at its end or in its middle."""
    if room <= 0:
        return text, size
    need = measure(text, size)
    if need <= room:
        return text, size
    size = max(size - least, size * room / need)
    if measure(text, size) <= room:
        return text, size
    keep = len(text)
    while keep > 1:
        keep -= 1
        if elide == "middle":
            cut = text[: (keep + 1) // 2] + "\u2026" + text[len(text) - keep // 2:]
        else:
            cut = text[:keep] + "\u2026"
        if measure(cut, size) <= room:
            return cut, size
    return "\u2026", size
