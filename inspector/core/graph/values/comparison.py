"""Two runs on one graph compared node by node, as a plain record (torch-free): the relative L2 change of every
node's output, ||b - a|| / max(||a||, 1e-12) with `a` the first run (the baseline without edits, or the first
checkpoint), as `diff --json` computes it per capture; the first node in run order whose change is above the
threshold (`inspector.core.compare.diff.DEFAULT_THRESHOLD` unless told; NaN counts as diverged). A node's change
is that of the tensors its values are read from (`values.numbers`): a closed group's, that of the tensors it
returns."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

from ..record.nodes import Graph
from .numbers import TINY, GraphValues, Tensor, TensorIndex


def relative(diff_sq: float, base_sq: float) -> float:
    """||b - a|| / max(||a||, TINY) from the two sums of squares; NaN when either is not finite."""
    if not (math.isfinite(diff_sq) and math.isfinite(base_sq)):
        return float("nan")
    return math.sqrt(diff_sq) / max(math.sqrt(base_sq), TINY)


def diverged(change: float, threshold: float) -> bool:
    return not change <= threshold  # NaN counts as diverged


def _changes(graph: Graph, index: TensorIndex, tensors: Mapping[Tensor, tuple[float, float]]) -> dict[str, float]:
    out = {}
    for node in graph.nodes:
        found = [tensors[t] for t in index.of_node(node.id)]
        if found:
            out[node.id] = relative(sum(d for d, _ in found), sum(b for _, b in found))
    return out


@dataclass(frozen=True)
class GraphComparison:
    """Two runs of `graph` (the whole graph, or a view of it made by `for_view`).

    `change`: node id -> relative L2 change of its output (absent where nothing was compared). `first` and
    `second`: each run's own values (statistics, gradients). `rounds`: how many pairs of runs the comparison
    took (more than one when the first run's outputs did not fit the memory bound at once)."""

    graph: Graph
    change: Mapping[str, float]
    first_divergent: str | None
    threshold: float
    first: GraphValues
    second: GraphValues
    names: tuple[str, str] = ("first", "second")
    rounds: int = 1
    tensors: Mapping[Tensor, tuple[float, float]] = field(default_factory=dict, repr=False)
    whole: Graph | None = field(default=None, repr=False)

    @classmethod
    def of(cls, graph: Graph, tensors: Mapping[Tensor, tuple[float, float]], threshold: float,
           first: GraphValues, second: GraphValues, **kwargs) -> GraphComparison:
        change = _changes(graph, TensorIndex(graph, tensors), tensors)
        divergent = next((n.id for n in graph.nodes if n.id in change and diverged(change[n.id], threshold)), None)
        return cls(graph, change, divergent, threshold, first, second, tensors=dict(tensors), **kwargs)

    def for_view(self, view: Graph) -> GraphComparison:
        """The change of each node drawn in `view` (the whole graph's `closed(...)`), the first divergent node
        the one drawn holding it."""
        whole = self.whole or self.graph
        index = TensorIndex(whole, self.tensors)
        divergent = index.drawn_as(view).get(self.first_divergent) if self.first_divergent else None
        return GraphComparison(view, _changes(view, index, self.tensors), divergent, self.threshold,
                               self.first.for_view(view), self.second.for_view(view), self.names, self.rounds,
                               self.tensors, whole)

    def to_json(self) -> dict:
        return {"names": list(self.names), "threshold": self.threshold, "first_divergent": self.first_divergent,
                "change": dict(self.change), "rounds": self.rounds,
                "first": self.first.to_json(), "second": self.second.to_json()}
