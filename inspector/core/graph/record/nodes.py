"""The graph of one forward, as plain frozen records: nodes, the tensors between them (edges) and the module
calls that hold them (groups). Torch-free and Qt-free, so the app, the layout and the CLI read a graph made in
the worker without importing the engine; `to_json` / `from_json` carry it whole.

Names. A module call is named as the engine names a layer call (`inspector.core.common.keys.LayerCall`): `layer1.0.conv1`,
`blocks.0.norm1#1` for the second call of a module called twice; the model itself, when it is one node (a
TorchScript program, a model without submodules), is `(model)`. A functional operation is named after the group
it runs in and its op, with `()` so that it never collides with a module's path: `layer1.0.add()`,
`encoder.reshape()#1` for the second reshape in that group, `add()` at the top. The model's input and output are
`input` and `output`.

Groups. Every call of a non-leaf module is a group (named like a module call); a group holds the nodes and groups
recorded while it was open. The functions one call of a module's other method ran, with no module called in it,
are a group too, named `transform.postprocess(...)` (`#K` for a later call): a detector's post-processing is
hundreds of functions, one node closed. `closed(open_groups)` collapses every group not opened into one node of kind
`group`: the layout and the view draw a large network a group at a time (resnet50's `layer3.2` closed is one
node), and a group's id is the same whether it is drawn open (a frame) or closed (a node).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable, Literal

NodeKind = Literal["input", "module", "function", "output", "group"]

#: The id of the node the model itself is when it runs as one (TorchScript, a model with no submodules).
MODEL_NODE = "(model)"


@dataclass(frozen=True)
class Node:
    """One step of the forward. `op`: a module's class name (`Conv2d`), a function's op (`add`, `cat`, `reshape`,
    `matmul`, `scaled_dot_product_attention`), `input` or `output`; for a closed group, the module's class name."""

    id: str
    kind: NodeKind
    op: str
    path: str = ""  # module path (module and group nodes); '' otherwise and for the model itself
    call: int = 0  # which call of the module (0: the first), as in the engine's `path:output#K`
    group: str = ""  # id of the innermost group it lies in; '' at the top
    inplace: bool = False  # a function that changed one of its inputs in place (`x += y`, `relu_`)

    def to_json(self) -> dict:
        return {"id": self.id, "kind": self.kind, "op": self.op, "path": self.path, "call": self.call,
                "group": self.group, "inplace": self.inplace}


@dataclass(frozen=True)
class Edge:
    """One tensor from the node that made it (or last changed it in place) to one node that reads it.

    `index`: which of the source's output tensors (None when it has one). `key`: the engine's capture key of that
    tensor (`layer1.0.conv1:output`, `blocks.0.attn:output#1`, `fc:output[1]`, `input`) where the engine captures
    it: a module's output tensors and the model's input; None for a function's output, or a tensor nested deeper
    in a module's output than the engine reaches (a dict's values)."""

    source: str
    target: str
    shape: tuple[int, ...]
    dtype: str
    index: int | None = None
    key: str | None = None

    @property
    def label(self) -> str:
        """What the view writes on the edge: `1x64x56x56 float32`."""
        return "x".join(map(str, self.shape)) + f" {self.dtype}"

    def to_json(self) -> dict:
        return {"source": self.source, "target": self.target, "shape": list(self.shape), "dtype": self.dtype,
                "index": self.index, "key": self.key}


@dataclass(frozen=True)
class Group:
    """One call of a non-leaf module: the nodes and groups recorded while it ran, in order (`children`, by id).
    Or, where `method` is set, one call of another method of the module at `path` (a detector's
    `transform.postprocess`, `postprocess_detections`) that ran only functions: see `recorder`.

    `outputs`: the tensors it returned that the engine captures, as (the node that made it, its index there, the
    group's capture key `layer1:output`): drawn closed, the group's edges carry the group's own key."""

    id: str
    path: str
    type_name: str
    call: int = 0
    parent: str = ""  # the group it lies in; '' at the top
    children: tuple[str, ...] = ()
    outputs: tuple[tuple[str, int | None, str], ...] = ()
    method: str = ""

    def key_of(self, source: str, index: int | None) -> str | None:
        """The group's capture key of the tensor `source` made (at `index`) when the group returned it."""
        return next((key for node, i, key in self.outputs if (node, i) == (source, index)), None)

    def to_json(self) -> dict:
        return {"id": self.id, "path": self.path, "type": self.type_name, "call": self.call, "parent": self.parent,
                "children": list(self.children), "outputs": [list(o) for o in self.outputs], "method": self.method}


@dataclass(frozen=True)
class Graph:
    """The graph of one forward: nodes in the order they ran (each after the nodes it reads from), the tensors
    between them, and the groups (non-leaf module calls) that are open in this view of it.

    `data_dependence`: where the model's control flow or shapes depended on the values of its input (a detector
    reading scores with `.item()`, keeping boxes with `nonzero`), one `where: what` each, first seen first; when
    any, the graph is that of this input's forward (`caption`). `notes`: what the recording could not see (a
    TorchScript program runs as one node)."""

    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    groups: tuple[Group, ...] = ()
    data_dependence: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())

    # -- lookups -------------------------------------------------------------------
    @cached_property
    def _nodes(self) -> dict[str, Node]:
        return {n.id: n for n in self.nodes}

    @cached_property
    def _groups(self) -> dict[str, Group]:
        return {g.id: g for g in self.groups}

    def node(self, node_id: str) -> Node:
        return self._nodes[node_id]

    def group(self, group_id: str) -> Group:
        return self._groups[group_id]

    def edges_into(self, node_id: str) -> list[Edge]:
        return [e for e in self.edges if e.target == node_id]

    def edges_from(self, node_id: str) -> list[Edge]:
        return [e for e in self.edges if e.source == node_id]

    @property
    def caption(self) -> str:
        """What the view and the figures call this graph."""
        if self.data_dependence:
            return "The graph of this input's forward (control flow depends on the data: " + \
                f"{'; '.join(self.data_dependence[:3])}{'; ...' if len(self.data_dependence) > 3 else ''})"
        return "The graph of the forward"

    def depth(self, group_id: str) -> int:
        """1 for a group at the top, 2 for one inside it, ..."""
        depth = 0
        while group_id:
            depth += 1
            group_id = self._groups[group_id].parent
        return depth

    def groups_within(self, depth: int) -> list[str]:
        """The groups to open to show the graph `depth` groups deep (0: every top-level group closed)."""
        return [g.id for g in self.groups if self.depth(g.id) <= depth]

    # -- collapsing ----------------------------------------------------------------
    def closed(self, open_groups: Iterable[str] = ()) -> Graph:
        """This graph with every group not in `open_groups` collapsed into one node (kind `group`, its id the
        group's id), where it lies in an open group or at the top. A group inside a closed group is hidden with
        it, open or not. Edges inside a collapsed group are dropped; an edge that crosses its border goes to or
        from its node, once per tensor, and one leaving it with a tensor it returned carries the group's own
        capture key (`layer1:output`; the key of the node inside that made it otherwise). Nodes keep their order (a collapsed group stands where its first node
        ran); groups left are the open ones whose parents are open."""
        opened = set(open_groups)
        shown: dict[str, str] = {}  # group id -> the id it is drawn as (itself when open)
        for g in self.groups:  # parents are recorded before their children
            outer = shown.get(g.parent, "") if g.parent else ""
            if g.parent and outer != g.parent:
                shown[g.id] = outer  # inside a closed group
            else:
                shown[g.id] = g.id if g.id in opened else f"\0{g.id}"  # marked: collapsed here

        def drawn_as(node: Node) -> str:
            where = shown.get(node.group, "") if node.group else ""
            return where[1:] if where.startswith("\0") else node.id

        nodes: list[Node] = []
        placed: set[str] = set()
        for node in self.nodes:
            target = drawn_as(node)
            if target in placed:
                continue
            placed.add(target)
            if target == node.id:
                nodes.append(node)
            else:
                g = self._groups[target]
                nodes.append(Node(g.id, "group", g.type_name, g.path, g.call, g.parent))
        edges: list[Edge] = []
        seen: set[tuple[str, int | None, str]] = set()
        for edge in self.edges:
            source, target = drawn_as(self._nodes[edge.source]), drawn_as(self._nodes[edge.target])
            tensor = (edge.source, edge.index, target)
            if source == target or tensor in seen:
                continue
            seen.add(tensor)
            key = edge.key
            if source != edge.source:
                key = self._groups[source].key_of(edge.source, edge.index) or key
            edges.append(Edge(source, target, edge.shape, edge.dtype, edge.index, key))
        groups = tuple(g for g in self.groups if shown[g.id] == g.id)
        return Graph(tuple(nodes), tuple(edges), groups, self.data_dependence, self.notes)

    # -- JSON ----------------------------------------------------------------------
    def to_json(self) -> dict:
        """Node-link data (`nodes`, `edges` with `source` and `target` ids, as networkx and d3 read it), with the
        groups, the data dependence and the notes; `json.dumps` writes it as it is."""
        return {"directed": True, "multigraph": True, "caption": self.caption,
                "nodes": [n.to_json() for n in self.nodes], "edges": [e.to_json() for e in self.edges],
                "groups": [g.to_json() for g in self.groups], "data_dependence": list(self.data_dependence),
                "notes": list(self.notes)}

    @classmethod
    def from_json(cls, data: dict) -> Graph:
        """The graph `to_json` wrote."""
        nodes = tuple(Node(n["id"], n["kind"], n["op"], n["path"], n["call"], n["group"], n["inplace"])
                      for n in data["nodes"])
        edges = tuple(Edge(e["source"], e["target"], tuple(e["shape"]), e["dtype"], e["index"], e["key"])
                      for e in data["edges"])
        groups = tuple(Group(g["id"], g["path"], g["type"], g["call"], g["parent"], tuple(g["children"]),
                             tuple((o[0], o[1], o[2]) for o in g["outputs"]), g["method"]) for g in data["groups"])
        return cls(nodes, edges, groups, tuple(data["data_dependence"]), tuple(data["notes"]))
