"""The levels of a graph and the layered order of each: what the layout computes once per group and keeps.

A level is what one group holds, one step in (the top level: what the model holds): its members are the nodes
and groups directly in it, each drawn as one box (a group closed) or one frame (a group open); its edges are the
graph's tensors lifted to those members. Neither depends on which groups are open, so each level is ordered once,
the first time it is shown, and opening or closing a group only resizes one of its parent's boxes: the rest of
every level keeps its layers and its left-to-right order.

The order is igraph's Sugiyama layout (`Graph.layout_sugiyama`): igraph is a well-kept C library with Python
wheels for Linux, macOS and Windows, and its layered layout does the layer assignment, the long edges' dummy
vertices and the crossing minimisation (barycentre sweeps) in C: 5,001 nodes in 0.09 s here, where
fast-sugiyama took 0.26 s. The layers are ours (`_layers`, passed to igraph): the longest path from the level's
sources, a node that reads nothing (an `arange`) pulled down to just above its first reader, so every edge goes
down at least one layer. A tensor that comes into a level from outside its group comes from `IN` (a vertex above
the first layer) and one that leaves it goes to `OUT` (below the last): so the group's inputs come in at the top,
its outputs leave at the bottom, and such an edge's dummy vertices are where its route runs inside the frame.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from dataclasses import dataclass

from ..record.nodes import Graph


def _import_igraph():
    """igraph, without the plotting backends it looks for when imported (pycairo, cairocffi, matplotlib): where
    they are installed (a dev environment has both), importing them took 3-7 s of a 5 s `import igraph` on 2 cores,
    with the GIL held in their C parts (the app's window stalled), for drawing the layout never does. One already
    imported is left as it is; igraph then says "plotting not available" if asked to plot, which it never is."""
    blocked = [name for name in ("cairo", "cairocffi", "matplotlib") if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # an import of it raises ImportError, which igraph expects where it is absent
    try:
        import igraph
    finally:
        for name in blocked:
            if sys.modules.get(name, 0) is None:
                del sys.modules[name]
    return igraph


igraph = _import_igraph()

IN, OUT = "\0in", "\0out"  # where a level's tensors come in from, and leave to, outside its group
TOP = ""  # the top level's id (a group's level has the group's id)

Slot = str | tuple[str, str, int]  # a member, or the dummy vertex of edge (u, v) on one layer


class Levels:
    """Where every node and group of a graph lies (its chain of groups, outermost first), each level's members in
    the order they ran, and each level's edges, entries (members a tensor from outside reaches) and exits."""

    def __init__(self, graph: Graph) -> None:
        self.chain: dict[str, tuple[str, ...]] = {}
        for group in graph.groups:
            self._chain_of(graph, group.id)
        for node in graph.nodes:
            self.chain[node.id] = self._chain_of(graph, node.group) + (node.group,) if node.group else ()
        self.members: dict[str, list[str]] = defaultdict(list)
        seen: set[str] = set()
        for node in graph.nodes:  # a member stands where its first node ran
            chain = self.chain[node.id]
            for depth, level in enumerate((TOP, *chain)):
                member = chain[depth] if depth < len(chain) else node.id
                if member not in seen:
                    seen.add(member)
                    self.members[level].append(member)
        self.edges: dict[str, set[tuple[str, str]]] = defaultdict(set)
        for edge in graph.edges:
            self._lift(edge.source, edge.target)

    def _chain_of(self, graph: Graph, group_id: str) -> tuple[str, ...]:
        """The groups `group_id` lies in, outermost first ('' : none)."""
        if not group_id:
            return ()
        if group_id not in self.chain:
            parent = graph.group(group_id).parent
            self.chain[group_id] = self._chain_of(graph, parent) + (parent,) if parent else ()
        return self.chain[group_id]

    def depth(self, level: str) -> int:
        return 0 if level == TOP else len(self.chain[level]) + 1

    def lift(self, item: str, level: str) -> str:
        """The member of `level` that `item` (a node or group inside it) is, or lies in."""
        chain, depth = self.chain[item], self.depth(level)
        return chain[depth] if depth < len(chain) else item

    def common(self, a: str, b: str) -> int:
        """How many groups `a` and `b` both lie in (the depth of the level where an edge between them runs)."""
        ca, cb = self.chain[a], self.chain[b]
        n = 0
        while n < len(ca) and n < len(cb) and ca[n] == cb[n]:
            n += 1
        return n

    def _lift(self, source: str, target: str) -> None:
        cs, ct = self.chain[source], self.chain[target]
        n = self.common(source, target)
        level = cs[n - 1] if n else TOP
        s, t = (cs[n] if n < len(cs) else source), (ct[n] if n < len(ct) else target)
        if s != t:
            self.edges[level].add((s, t))
        for k in range(n, len(cs)):  # it leaves every group the source lies in below `level`
            self.edges[cs[k]].add((cs[k + 1] if k + 1 < len(cs) else source, OUT))
        for k in range(n, len(ct)):  # and comes into every group the target lies in
            self.edges[ct[k]].add((IN, ct[k + 1] if k + 1 < len(ct) else target))


@dataclass(frozen=True)
class LevelOrder:
    """One level's layers, top to bottom, each a left-to-right row of slots (members and the dummy vertices of
    edges that pass the layer); `hint`: igraph's x of each slot (its unit: one slot's distance); `bends`: the
    dummy slots of each edge (u, v) of the level, top to bottom (u is IN, v is OUT for edges across its group's
    border)."""

    layers: tuple[tuple[Slot, ...], ...]
    hint: dict[Slot, float]
    bends: dict[tuple[str, str], tuple[Slot, ...]]


def _layers(members: list[str], edges: set[tuple[str, str]]) -> dict[str, int]:
    """Each member's layer: the longest path from the level's sources (members come in the order they ran, so an
    edge from a member to one before it, which a forward does not make, is left out); a member that reads nothing,
    neither in the level nor from outside, goes down to just above its first reader."""
    index = {m: i for i, m in enumerate(members)}
    preds: dict[str, list[str]] = defaultdict(list)
    succs: dict[str, list[str]] = defaultdict(list)
    reached = set()
    for u, v in edges:
        if u == IN:
            reached.add(v)
        elif v != OUT and index[u] < index[v]:
            preds[v].append(u)
            succs[u].append(v)
    layer: dict[str, int] = {}
    for m in members:
        layer[m] = max((layer[u] + 1 for u in preds[m]), default=0)
    for m in reversed(members):
        if not preds[m] and m not in reached and succs[m]:
            layer[m] = min(layer[v] for v in succs[m]) - 1
    return layer


#: Vertices (members and long edges' dummies) times crossing-minimisation sweeps one level may cost: a densenet's
#: dense block (49 layers, each reading every earlier one: 1,176 edges, 18,000 dummies) took 524 ms of CPU at 100
#: sweeps, 92 ms at 5, so opening it stalled nothing but kept the view waiting past the 200 ms target.
SWEEP_BUDGET = 100_000


def sweeps(vertices: int, most: int) -> int:
    """How many crossing-minimisation sweeps a level of `vertices` (dummies included) gets: `most` while within
    the budget, fewer for a level that dense, never under 5."""
    return max(min(most, 5), min(most, SWEEP_BUDGET // max(vertices, 1)))


def order_level(members: list[str], edges: set[tuple[str, str]], maxiter: int = 100) -> LevelOrder:
    """The layered order of one level (igraph's Sugiyama layout on layers `_layers` gives)."""
    layer = _layers(members, edges)
    top = 1 if any(u == IN for u, _ in edges) else 0
    bottom = max(layer.values(), default=-1) + 1 + top
    vertices = list(members) + ([IN] if top else []) + ([OUT] if any(v == OUT for _, v in edges) else [])
    at = {v: i for i, v in enumerate(vertices)}
    depth = {**{m: layer[m] + top for m in members}, IN: 0, OUT: bottom}
    kept = sorted((e for e in edges if depth[e[0]] < depth[e[1]]), key=lambda e: (at[e[0]], at[e[1]]))
    g = igraph.Graph(n=len(vertices), edges=[(at[u], at[v]) for u, v in kept], directed=True)
    result = g.layout_sugiyama(layers=[depth[v] for v in vertices], maxiter=sweeps(len(vertices) + sum(
        depth[v] - depth[u] - 1 for u, v in kept), maxiter))
    rows: dict[int, list[tuple[float, int, Slot]]] = defaultdict(list)
    hint: dict[Slot, float] = {}
    coords = result.coords  # a copy each time it is read
    for i, m in enumerate(members):
        x = coords[i][0]
        rows[depth[m]].append((x, i, m))
        hint[m] = x
    bends: dict[tuple[str, str], tuple[Slot, ...]] = {}
    for (u, v), points in zip(kept, result.edge_routing):
        slots = []
        for k, (x, _y) in enumerate(points):
            slot = (u, v, depth[u] + 1 + k)
            rows[slot[2]].append((x, len(vertices) + len(hint), slot))
            hint[slot] = x
            slots.append(slot)
        bends[(u, v)] = tuple(slots)
    layers = tuple(tuple(s for _x, _i, s in sorted(rows[k], key=lambda r: (r[0], r[1]))) for k in range(top, bottom)
                   if rows[k])
    return LevelOrder(layers, hint, bends)
