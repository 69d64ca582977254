"""What the Graph tab can colour its nodes by ("Colour by"), and what each choice draws on one view of the graph:
an `Overlay` (fills, edge widths, the first NaN/Inf and its path, the colour bar, the legend), the node to outline
(the first divergent one of a comparison) and the text said when the mouse is over a node.

One run's values are drawn by the CLI's own rule (`draw_values.overlay_of`); a comparison (edits on vs off, two
models) by the same colour map, scale and tick text (`colour_at`, `Scale`, `value_text`). Qt-free.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from inspector.core.graph.draw import ColourBar, Overlay
from inspector.core.graph.draw_values import SHOWN, Scale, colour_at, overlay_of, value_text


@dataclass(frozen=True)
class Kind:
    """One choice of "Colour by": its menu text, the worker's family of numbers it needs (None: nothing)."""

    name: str
    label: str
    family: str | None


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("none", "none", None),
    Kind("activation", "activation mean |x|", "values"),
    Kind("l2", "L2", "values"),
    Kind("zeros", "zeros (dead units)", "values"),
    Kind("gradient", "gradient L2", "values"),
    Kind("nan", "first NaN/Inf", "values"),
    Kind("change", "change with edits", "edits"),
    Kind("divergence", "divergence against", "against"),
)}


@dataclass(frozen=True)
class Drawn:
    """What the painter draws for one view: the overlay, the node outlined (None: none), hover text per node."""

    overlay: Overlay
    outline: str | None
    texts: dict


def drawn_for(kind: str, found, view) -> Drawn:
    """`found` (a whole graph's GraphValues, or a GraphComparison for `change`/`divergence`) on `view`, the closed
    graph drawn."""
    if kind in ("change", "divergence"):
        return _comparison(kind, found.for_view(view))
    values = found.for_view(view)
    what = SHOWN[kind]
    texts, title = {}, what.title.replace("each node's", "its")
    for node_id, v in values.nodes.items():
        value = what.read(v)
        said = "not recorded" if value is None else value_text(value, what.fraction) if math.isfinite(value) \
            else str(value)
        extra = f" · NaN {v.nan}, Inf {v.inf} of {v.count}" if v.nan or v.inf else ""
        texts[node_id] = f"{node_id}: {title} = {said}{extra}"
    return Drawn(overlay_of(values, kind), None, texts)


def _comparison(kind: str, comparison) -> Drawn:
    """Nodes coloured by the relative L2 change of their output, second vs first; the first divergent outlined."""
    first, second = comparison.names
    what = (f"relative L2 change, {second} vs {first}" if kind == "change" else
            f"relative L2 divergence, {second} vs {first}")
    found = {k: v for k, v in comparison.change.items() if math.isfinite(v)}
    fills, bar = {}, None
    if found:
        scale = Scale.of(found.values())
        fills = {k: colour_at(scale.at(v)) for k, v in found.items()}
        ticks = ((0.0, value_text(scale.lo, False)), (1.0, value_text(scale.hi, False)))
        if scale.hi > scale.lo:
            ticks = (ticks[0], (0.5, value_text(scale.middle, False)), ticks[1])
        low = " (log scale, 0 at the bottom)" if scale.log else ""
        bar = ColourBar(f"Colour: {what}{low}", tuple(colour_at(k / 31) for k in range(32)), ticks)
    divergent = comparison.first_divergent
    legend = [f"Outlined: {divergent}, the first node whose change is above {comparison.threshold:g}."
              if divergent else f"No node changes by more than {comparison.threshold:g}."]
    if not found:
        legend.insert(0, "No node was compared in this run.")
    texts = {k: f"{k}: {what} = " + (value_text(v, False) if math.isfinite(v) else "NaN") +
             (" (the first above the threshold)" if k == divergent else "")
             for k, v in comparison.change.items()}
    return Drawn(Overlay(fills, {}, None, (), bar, tuple(legend)), divergent, texts)
