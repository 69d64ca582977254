"""The numbers the graph is coloured by, as plain records (torch-free, so they cross to the app's thread as they
are): per node of one run, the statistics of the tensor it made and its gradient's L2; per edge, the gradient's
L2 of the tensor it carries; the first node that made NaN or Inf and a path to it from the input; and, for two
runs (edits on and off, or two checkpoints), the relative L2 change of every node's output.

One rule for what a node's values are: those of the tensor(s) it made, as it made them (a tensor an in-place op
changes later is the in-place node's). Values are sums (`NodeValues`), so that a node with several output
tensors, and a closed group, add them up. The `output` node takes the tensors it receives (the model's output).
A closed group takes the tensors it returns (`Group.outputs`, its capture key); a group that returns none the
engine captures (a dict) has no values. `for_view(closed_graph)` applies that rule to every drawn node.

Statistics follow the engine's (`inspector.core.engine.stats`): mean |x| and L2 over the finite values, the zero
fraction over all of them, NaN and Inf counted. Relative change is `diff --json`'s: ||b - a|| / max(||a||, 1e-12),
`a` the first run (the baseline, or the first checkpoint), NaN where either holds NaN or Inf.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable, Mapping

from ..record.nodes import Graph

#: The floor under the baseline's norm (`inspector.core.compare.diff.TINY`, torch-free here).
TINY = 1e-12

Tensor = tuple[str, "int | None"]  # (the node that made it, its index among that node's outputs)


@dataclass(frozen=True)
class NodeValues:
    """Sums over the values of one or more tensors: what the view's colours are read from."""

    count: int = 0
    abs_sum: float = 0.0  # over the finite values
    sq_sum: float = 0.0  # over the finite values
    zeros: int = 0
    nan: int = 0
    inf: int = 0
    grad_sq: float | None = None  # the gradient's sum of squares; None: no gradient reached it

    @property
    def mean_abs(self) -> float:
        """Mean |x| over the finite values (0 when there are none)."""
        finite = self.count - self.nan - self.inf
        return self.abs_sum / finite if finite else 0.0

    @property
    def l2(self) -> float:
        return math.sqrt(self.sq_sum)

    @property
    def zero_fraction(self) -> float:
        return self.zeros / self.count if self.count else 0.0

    @property
    def grad_l2(self) -> float | None:
        return None if self.grad_sq is None else math.sqrt(self.grad_sq)

    @property
    def nonfinite(self) -> bool:
        return bool(self.nan or self.inf)

    def __add__(self, other: NodeValues) -> NodeValues:
        grads = [g for g in (self.grad_sq, other.grad_sq) if g is not None]
        return NodeValues(self.count + other.count, self.abs_sum + other.abs_sum, self.sq_sum + other.sq_sum,
                          self.zeros + other.zeros, self.nan + other.nan, self.inf + other.inf,
                          sum(grads) if grads else None)

    def to_json(self) -> dict:
        return {"mean_abs": self.mean_abs, "l2": self.l2, "zero_fraction": self.zero_fraction, "nan": self.nan,
                "inf": self.inf, "grad_l2": self.grad_l2}


def _total(items: Iterable[NodeValues]) -> NodeValues | None:
    found = list(items)
    if not found:
        return None
    total = found[0]
    for item in found[1:]:
        total = total + item
    return total


@dataclass(frozen=True)
class TensorIndex:
    """Which tensors of the whole graph each node of a view stands for, and each edge carries."""

    whole: Graph
    made: Mapping[Tensor, object]

    @cached_property
    def by_key(self) -> dict[str, Tensor]:
        found: dict[str, Tensor] = {e.key: (e.source, e.index) for e in self.whole.edges if e.key}
        found.update((key, (node, index)) for g in self.whole.groups for node, index, key in g.outputs)
        return found

    @cached_property
    def ids(self) -> set[str]:
        return {n.id for n in self.whole.nodes}

    def of_node(self, node_id: str) -> list[Tensor]:
        """The tensors node `node_id` (of the whole graph or a view of it) stands for, among `made`."""
        made = self.made
        if node_id == "output":
            return [t for t in dict.fromkeys((e.source, e.index) for e in self.whole.edges_into("output"))
                    if t in made]
        if node_id in self.ids:
            return [t for t in ((node_id, None), *((node_id, i) for i in range(self.counts.get(node_id, 0))))
                    if t in made]
        try:
            group = self.whole.group(node_id)
        except KeyError:
            return []
        return [(node, index) for node, index, _ in group.outputs if (node, index) in made]

    @cached_property
    def counts(self) -> dict[str, int]:
        """Node id -> 1 + the highest index among its tensors in `made` (of a node with several outputs)."""
        found: dict[str, int] = {}
        for node, index in self.made:
            if index is not None:
                found[node] = max(found.get(node, 0), index + 1)
        return found

    def of_edge(self, source: str, index: int | None, key: str | None) -> Tensor | None:
        if source in self.ids:
            return source, index
        return self.by_key.get(key) if key else None

    def drawn_as(self, view: Graph) -> dict[str, str]:
        """Node id in the whole graph -> the id of the node of `view` it is drawn in."""
        shown = {n.id for n in view.nodes}
        out = {}
        for node in self.whole.nodes:
            where, group = node.id, node.group
            while where not in shown and group:
                where, group = group, self.whole.group(group).parent
            if where in shown:
                out[node.id] = where
        return out


def path_to(graph: Graph, node_id: str) -> tuple[str, ...]:
    """The node ids of one shortest path of edges from `input` to `node_id` (just `node_id` when none leads
    there)."""
    before: dict[str, str | None] = {"input": None}
    todo = ["input"]
    for here in todo:
        if here == node_id:
            break
        for edge in graph.edges_from(here):
            if edge.target not in before:
                before[edge.target] = here
                todo.append(edge.target)
    if node_id not in before:
        return (node_id,)
    path: list[str] = []
    at: str | None = node_id
    while at is not None:
        path.append(at)
        at = before[at]
    return tuple(reversed(path))


def _drawn_path(path: Iterable[str], drawn: dict[str, str]) -> tuple[str, ...]:
    out: list[str] = []
    for node in path:
        where = drawn.get(node)
        if where is not None and (not out or out[-1] != where):
            out.append(where)
    return tuple(out)


@dataclass(frozen=True)
class GraphValues:
    """The values of one run on `graph` (the whole graph, or a view of it made by `for_view`).

    `nodes`: node id -> its values (a node whose output was not recorded, a group that returns nothing the
    engine captures, is absent). `edges`: the gradient's L2 of each edge's tensor, in `graph.edges`' order (None:
    no gradient reached it, or the run had none). `first_nonfinite`: the first node in run order whose output
    holds NaN or Inf, `nonfinite_path` one path from the input to it. `gradients`: whether a backward ran (a
    detector that found nothing, a model with nothing to differentiate: forward values only, said in `notes`)."""

    graph: Graph
    nodes: Mapping[str, NodeValues]
    edges: tuple[float | None, ...]
    first_nonfinite: str | None = None
    nonfinite_path: tuple[str, ...] = ()
    target: str = ""
    gradients: bool = True
    notes: tuple[str, ...] = ()
    tensors: Mapping[Tensor, NodeValues] = field(default_factory=dict, repr=False)  # of the whole graph
    whole: Graph | None = field(default=None, repr=False)  # the whole graph, when `graph` is a view of it

    @classmethod
    def of(cls, graph: Graph, tensors: Mapping[Tensor, NodeValues], **kwargs) -> GraphValues:
        """The values of the whole `graph` from those of the tensors its nodes made."""
        index = TensorIndex(graph, tensors)
        nodes = {}
        for node in graph.nodes:
            total = _total(tensors[t] for t in index.of_node(node.id))
            if total is not None:
                nodes[node.id] = total
        first = next((n.id for n in graph.nodes if n.id in nodes and nodes[n.id].nonfinite), None)
        edges = tuple(tensors[(e.source, e.index)].grad_l2 if (e.source, e.index) in tensors else None
                      for e in graph.edges)
        return cls(graph, nodes, edges, first, path_to(graph, first) if first else (), tensors=dict(tensors),
                   **kwargs)

    def for_view(self, view: Graph) -> GraphValues:
        """The values of each node and edge drawn in `view` (the whole graph's `closed(...)`): a closed group's
        are those of the tensors it returns."""
        whole = self.whole or self.graph
        index = TensorIndex(whole, self.tensors)
        nodes = {}
        for node in view.nodes:
            total = _total(self.tensors[t] for t in index.of_node(node.id))
            if total is not None:
                nodes[node.id] = total
        edges = []
        for e in view.edges:
            t = index.of_edge(e.source, e.index, e.key)
            edges.append(self.tensors[t].grad_l2 if t in self.tensors else None)
        drawn = index.drawn_as(view)
        first = drawn.get(self.first_nonfinite) if self.first_nonfinite else None
        return GraphValues(view, nodes, tuple(edges), first, _drawn_path(self.nonfinite_path, drawn), self.target,
                           self.gradients, self.notes, self.tensors, whole)

    def to_json(self) -> dict:
        """What `graph --values` writes beside the graph's node-link data."""
        return {"target": self.target, "gradients": self.gradients,
                "nodes": {k: v.to_json() for k, v in self.nodes.items()},
                "edges": list(self.edges), "first_nonfinite": self.first_nonfinite,
                "nonfinite_path": list(self.nonfinite_path), "notes": list(self.notes)}
