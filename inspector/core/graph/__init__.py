"""The graph of one forward: what a model computed, node by node, on one input.

    from inspector.core.graph import record_graph
    graph = record_graph(model, x)          # every leaf call and the functions between them
    top = graph.closed()                    # every top-level group (non-leaf module call) as one node
    some = graph.closed(["layer3", "layer3.2"])
    json.dumps(graph.to_json())             # node-link data

In folders, each over the ones below it: `record/` (the records `record.nodes`: Node, Edge, Group, Graph,
torch-free; the recorder and `record_graph`, which loads torch when first used), `layout/` (where each node is
drawn), `values/` (a run's numbers on the nodes, two runs compared), `draw/` (the figures and what they colour
the nodes by); `served` answers the Graph tab's two requests on a workbench.
"""

from __future__ import annotations

from .record.nodes import MODEL_NODE, Edge, Graph, Group, Node

__all__ = ["MODEL_NODE", "Edge", "Graph", "Group", "Node", "record_graph"]


def __getattr__(name: str):
    if name == "record_graph":
        from .record.entry import record_graph

        return record_graph
    raise AttributeError(f"module 'inspector.core.graph' has no attribute {name!r}")
