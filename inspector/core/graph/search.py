"""What the Graph tab's search finds (Qt-free): the nodes and groups of the whole recorded graph, closed or not,
whose name holds the text, or (`type:Conv2d`) whose module type or op is the one named; in the order they ran.
And which groups hold one of them (opened to show it)."""

from __future__ import annotations


def matches(graph, text: str) -> list[str]:
    """Ids of the nodes and groups of `graph` (a core Graph, every group in it) that `text` finds."""
    text = text.strip()
    if not text:
        return []
    if text.lower().startswith("type:"):
        wanted = text[5:].strip().lower()

        def node_hit(n) -> bool:
            return n.kind in ("module", "function") and n.op.lower() == wanted

        def group_hit(g) -> bool:
            return g.type_name.lower() == wanted
    else:
        wanted = text.lower()

        def node_hit(n) -> bool:
            return wanted in n.id.lower() or wanted in n.op.lower()

        def group_hit(g) -> bool:
            return wanted in g.id.lower() or wanted in g.type_name.lower()
    order = first_node_of_groups(graph)
    found = [((i, 1_000), n.id) for i, n in enumerate(graph.nodes) if node_hit(n)]
    found += [(order.get(g.id, (len(graph.nodes), 0)), g.id) for g in graph.groups if group_hit(g)]
    return [item_id for _at, item_id in sorted(found, key=lambda pair: pair[0])]


def first_node_of_groups(graph) -> dict[str, tuple[int, int]]:
    """Group id -> (the index of the first node that ran in it, its depth): a group comes before what it holds."""
    first: dict[str, tuple[int, int]] = {}
    for i, node in enumerate(graph.nodes):
        for depth, group_id in enumerate(reversed(holders(graph, node.id))):
            first.setdefault(group_id, (i, depth))
    return first


def holders(graph, item_id: str) -> list[str]:
    """The groups that hold node or group `item_id`, innermost first."""
    try:
        group = graph.node(item_id).group
    except KeyError:
        group = graph.group(item_id).parent
    found = []
    while group:
        found.append(group)
        group = graph.group(group).parent
    return found


def shown_as(graph, layout, item_id: str) -> str | None:
    """The id `item_id` (a node or group of the whole graph) is drawn as in `layout`: itself, or the closed
    group it lies in; None where it is not in the graph."""
    if item_id in layout.boxes or item_id in layout.frames:
        return item_id
    try:
        around = holders(graph, item_id)
    except KeyError:
        return None
    return next((g for g in around if g in layout.boxes), None)
