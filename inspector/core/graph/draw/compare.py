"""Two runs compared on the graph, drawn: each node coloured by the relative L2 change of its output (second vs
first: edited vs baseline, or the second checkpoint vs the first), the first node above the threshold outlined,
and what each node's value says in words. One rule for the app's Graph tab ("change with edits", "divergence
against") and the `graph --values change` command; the colour map, scale and tick text are `draw.values`'.

    comparison = compare_edits(model, x, graph, edits).for_view(layout.graph)
    overlay, texts = comparison_overlay(comparison, "change")
    figure = draw_graph(layout, overlay)

Torch-free and Qt-free.
"""

from __future__ import annotations

import math

from .figure import ColourBar, Overlay
from .values import Scale, colour_at, value_text

#: What the nodes' colour is called, by kind: edits on vs off, or two models.
WHAT = {"change": "relative L2 change", "divergence": "relative L2 divergence"}


def comparison_overlay(comparison, kind: str = "change") -> tuple[Overlay, dict[str, str]]:
    """The overlay of `comparison` (a `GraphComparison` of the view drawn: `for_view`), coloured by each node's
    change, its first divergent node outlined; and node id -> what its value says."""
    first, second = comparison.names
    what = f"{WHAT[kind]}, {second} vs {first}"
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
    return Overlay(fills, {}, None, (), bar, tuple(legend), divergent), texts
