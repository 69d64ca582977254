"""The values of one run drawn on the graph: which number colours the nodes (`SHOWN`: the rows of one run's values
in the Colour-by table, `values.colour_by`), the colour map, and the `Overlay` made from a run's values on one view
of the graph.

    view = values.for_view(layout.graph)         # graph_values(...) on the drawn nodes
    figure = draw_graph(layout, overlay_of(view, "gradient"))

Colours run from the lowest value drawn to the highest (a perceptually even map, viridis's anchors), linearly, or
on a log scale where the values span more than a hundredfold (`Scale`); the colour bar's ticks say both ends and
the middle in the value's own units (% for a fraction). The first node whose
output holds NaN or Inf is red and the path from the input to it outlined, whichever value is shown; with
`gradient`, each edge is as wide as its tensor's gradient's L2 (1 to 5 units, on the same kind of scale). Torch-free.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

from ..values.colour_by import SHOWN
from .figure import Colour, ColourBar, Overlay

if TYPE_CHECKING:
    from ..values.numbers import GraphValues

#: viridis at 0, 1/4, 1/2, 3/4 and 1: dark blue (low) to yellow (high), even in lightness, readable in grey.
ANCHORS: tuple[Colour, ...] = ((68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37))
EDGE_WIDTHS = (1.0, 5.0)
LOG_RANGE = 100.0  # positive values spanning more than this are coloured on a log scale


def colour_at(t: float) -> Colour:
    """The map's colour at `t` in [0, 1] (clamped)."""
    t = min(1.0, max(0.0, t)) * (len(ANCHORS) - 1)
    k = min(int(t), len(ANCHORS) - 2)
    f = t - k
    a, b = ANCHORS[k], ANCHORS[k + 1]
    return (round(a[0] + (b[0] - a[0]) * f), round(a[1] + (b[1] - a[1]) * f), round(a[2] + (b[2] - a[2]) * f))


def value_text(value: float, fraction: bool) -> str:
    """A tick's label: three significant digits (`0.0123`, `4.56e+03`), a fraction as a percentage (`12.5%`)."""
    return f"{value * 100:.3g}%" if fraction else f"{value:.3g}"


@dataclass(frozen=True)
class Scale:
    """Where a value lies from the lowest drawn (0) to the highest (1): linear, or on a log scale where the
    positive values span more than LOG_RANGE (a gradient from 1 at the output to 1e-5 deep inside: linear, every
    node but a few would be the lowest colour); then 0 and below are at the bottom."""

    lo: float
    hi: float
    log: bool = False

    @classmethod
    def of(cls, found: Iterable[float], fraction: bool = False) -> Scale:
        found = list(found)
        positive = [v for v in found if v > 0]
        if not fraction and len(positive) >= 2 and max(positive) > LOG_RANGE * min(positive):
            return cls(min(positive), max(positive), True)
        return cls(min(found), max(found))

    def at(self, value: float) -> float:
        if self.hi == self.lo:
            return 0.5
        if self.log:
            return 0.0 if value <= self.lo else math.log(value / self.lo) / math.log(self.hi / self.lo)
        return (value - self.lo) / (self.hi - self.lo)

    @property
    def middle(self) -> float:
        return math.sqrt(self.lo * self.hi) if self.log else (self.lo + self.hi) / 2


def overlay_of(values: GraphValues, shown: str) -> Overlay:
    """The overlay of `values` (of the view drawn: `GraphValues.for_view`), its nodes coloured by `SHOWN[shown]`."""
    what = SHOWN[shown]
    found = {}
    for node_id, v in values.nodes.items():
        value = what.read(v)
        if value is not None and math.isfinite(value):
            found[node_id] = float(value)
    legend = []
    bar = None
    fills: dict[str, Colour] = {}
    if found:
        scale = Scale.of(found.values(), what.fraction)
        fills = {k: colour_at(scale.at(v)) for k, v in found.items()}
        ticks = ((0.0, value_text(scale.lo, what.fraction)), (1.0, value_text(scale.hi, what.fraction)))
        if scale.hi > scale.lo:
            ticks = (ticks[0], (0.5, value_text(scale.middle, what.fraction)), ticks[1])
        low = " (log scale" + (f", {min(found.values()):.3g} and below at the bottom" if min(found.values()) < scale.lo
                               else "") + ")" if scale.log else ""
        bar = ColourBar(f"Colour: {what.title}{low}", tuple(colour_at(k / 31) for k in range(32)), ticks)
    drawn = {n.id for n in values.graph.nodes}
    missing = len(drawn - set(found))
    if not found:
        legend.append(f"No node has a value of {what.title} in this run.")
    elif missing:
        legend.append(f"{missing} node{'s' if missing > 1 else ''} in their plain colour: no {what.title} recorded.")
    widths: dict[tuple[str, str, int | None], float] = {}
    if shown == "gradient":
        grads = {(e.source, e.target, e.index): g for e, g in zip(values.graph.edges, values.edges)
                 if g is not None and math.isfinite(g)}
        if grads:
            scale = Scale.of(grads.values())
            a, b = EDGE_WIDTHS
            widths = {k: a + (b - a) * scale.at(g) for k, g in grads.items()}
            legend.append(f"Edge width: the L2 of the gradient of the tensor it carries, {a:g} ({scale.lo:.3g}) to "
                          f"{b:g} ({scale.hi:.3g})" + (", log scale." if scale.log else "."))
    if shown == "gradient" and values.gradients and values.target:
        target = f"class {values.target}" if values.target.isdecimal() else values.target
        legend.append(f"The backward starts from the target: {target}.")
    if values.first_nonfinite:
        legend.append(f"Red: {values.first_nonfinite}, the first node whose output holds NaN or Inf; outlined in red: "
                      "a path from the input to it.")
    elif shown == "nan":
        legend.append("No node's output holds NaN or Inf in this run.")
    legend += [f"Note: {n}" for n in values.notes]
    return Overlay(fills, widths, values.first_nonfinite, tuple(values.nonfinite_path), bar, tuple(legend))
