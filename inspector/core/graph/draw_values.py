"""The values of one run drawn on the graph: which number colours the nodes (`SHOWN`, the table the CLI's
`--values` reads), the colour map, and the `Overlay` made from a run's values on one view of the graph.

    view = values.for_view(layout.graph)         # graph_values(...) on the drawn nodes
    figure = draw_graph(layout, overlay_of(view, "gradient"))

Colours run linearly from the lowest value drawn to the highest (a perceptually even map, viridis's anchors), the
colour bar's ticks say both ends and the middle in the value's own units (% for a fraction). The first node whose
output holds NaN or Inf is red and the path from the input to it outlined, whichever value is shown; with
`gradient`, each edge is as wide as its tensor's gradient's L2 (1 to 5 units). Torch-free.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from .draw import Colour, ColourBar, Overlay

if TYPE_CHECKING:
    from .values_model import GraphValues, NodeValues


@dataclass(frozen=True)
class Shown:
    """One value the nodes can be coloured by: what the colour bar calls it, how to read it, whether a fraction."""

    name: str
    title: str
    read: Callable[[NodeValues], float | None]
    fraction: bool = False


def _nonfinite(v: NodeValues) -> float:
    return (v.nan + v.inf) / v.count if v.count else 0.0


#: `--values` NAME -> what colours the nodes.
SHOWN: dict[str, Shown] = {s.name: s for s in (
    Shown("activation", "mean |x| of each node's output", lambda v: v.mean_abs),
    Shown("l2", "L2 norm of each node's output", lambda v: v.l2),
    Shown("zeros", "fraction of zeros in each node's output (dead units)", lambda v: v.zero_fraction, True),
    Shown("gradient", "gradient L2 at each node's output", lambda v: v.grad_l2),
    Shown("nan", "fraction of NaN or Inf in each node's output", _nonfinite, True),
)}

#: viridis at 0, 1/4, 1/2, 3/4 and 1: dark blue (low) to yellow (high), even in lightness, readable in grey.
ANCHORS: tuple[Colour, ...] = ((68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37))
EDGE_WIDTHS = (1.0, 5.0)


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


def _scaled(found: dict, low_high: tuple[float, float]):
    lo, hi = min(found.values()), max(found.values())
    a, b = low_high
    return {k: (a + b) / 2 if hi == lo else a + (b - a) * (v - lo) / (hi - lo) for k, v in found.items()}, lo, hi


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
        where, lo, hi = _scaled(found, (0.0, 1.0))
        fills = {k: colour_at(t) for k, t in where.items()}
        ticks = ((0.0, value_text(lo, what.fraction)), (1.0, value_text(hi, what.fraction)))
        if hi > lo:
            ticks = (ticks[0], (0.5, value_text((lo + hi) / 2, what.fraction)), ticks[1])
        bar = ColourBar(f"Colour: {what.title}", tuple(colour_at(k / 31) for k in range(32)), ticks)
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
            widths, lo, hi = _scaled(grads, EDGE_WIDTHS)
            legend.append(f"Edge width: the L2 of the gradient of the tensor it carries, {EDGE_WIDTHS[0]:g} "
                          f"({lo:.3g}) to {EDGE_WIDTHS[1]:g} ({hi:.3g}).")
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
