"""What each choice of the Graph tab's "Colour by" (`values.colour_by.COLOUR_BY`) draws on one view of the graph:
an `Overlay` (fills, edge widths, the first NaN/Inf and its path, the colour bar, the legend), the node to outline
(the first divergent one of a comparison) and the text said when the mouse is over a node.

One run's values are drawn by the CLI's own rule (`draw.values.overlay_of`), a comparison (edits on vs off, two
models) by its own (`draw.compare.comparison_overlay`). Qt-free.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..values.colour_by import AGAINST, COLOUR_BY, EDITS, SHOWN
from .compare import comparison_overlay
from .figure import Overlay
from .values import overlay_of, value_text


@dataclass(frozen=True)
class Drawn:
    """What the painter draws for one view: the overlay, the node outlined (None: none), hover text per node, and
    per edge ((source, target, index): its tensor's gradient L2, where the run has gradients)."""

    overlay: Overlay
    outline: str | None
    texts: dict
    edge_texts: dict = field(default_factory=dict)


def drawn_for(kind: str, found, view) -> Drawn:
    """`found` (a whole graph's GraphValues, or a GraphComparison for `change`/`divergence`) on `view`, the closed
    graph drawn."""
    if COLOUR_BY[kind].family in (EDITS, AGAINST):
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
    return Drawn(overlay_of(values, kind), None, texts, _edge_texts(values))


def _edge_texts(values) -> dict:
    """Each edge of the view: its tensor's shape and the L2 of its gradient (none without a backward)."""
    if not values.gradients:
        return {}
    out = {}
    for edge, grad in zip(values.graph.edges, values.edges):
        said = "not recorded" if grad is None else value_text(grad, False) if math.isfinite(grad) else str(grad)
        key = (edge.source, edge.target, edge.index)
        out[key] = f"{edge.source} → {edge.target}: {edge.label} · gradient L2 = {said}"
    return out


def _comparison(kind: str, comparison) -> Drawn:
    """Nodes coloured by the relative L2 change of their output, second vs first; the first divergent outlined
    (the graph command's rule: `draw.compare`)."""
    overlay, texts = comparison_overlay(comparison, kind)
    return Drawn(overlay, overlay.outline, texts)
