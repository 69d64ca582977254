"""The Graph tab's two requests served on a Workbench holding the model: the graph recorded on the input and laid
out (`record`), a run's values on its nodes (`values`). One implementation for every transport of the engine
protocol: the window's worker thread and `network-inspector serve`.

    recorded = record(bench, GraphRequest(model, "sample:star"), cancel)   # a GraphRecorded
    found = values(bench, GraphValuesRequest(model, "sample:star", recorded.graph), cancel)
"""

from __future__ import annotations

import threading
import time

from ..records.graph import GraphRecorded, GraphRequest, GraphValuesRequest


def input_of(bench, source: str, frame=None):
    """The input tensor of a graph request: `source` decoded (or `frame`), or the model's default input for ""."""
    if source or frame is not None:
        return bench.input_tensor(source, frame)
    from ..common.errors import SpecError

    x = bench.loaded.example_input()
    if x is None:
        raise SpecError(f"The graph of {bench.loaded.source} needs an input (it has no default input shape).")
    return x


def record(bench, request: GraphRequest, cancel: threading.Event | None = None, phase=None) -> GraphRecorded:
    """The graph of `bench`'s loaded model on `request.input` (`leaves` as one node each), and, when asked, its
    first layout (every top-level group closed). `phase(text)` is told what is being done."""
    from . import record_graph
    from .layout.graph_layout import GraphLayout

    start = time.perf_counter()
    if phase is not None:
        phase("Recording the graph")
    x = input_of(bench, request.input, request.frame)
    graph = record_graph(bench.loaded, x, leaves=request.leaves, cancel=cancel)
    layout = None
    if request.layout:
        if phase is not None:
            phase("Laying out the graph")
        layout = GraphLayout(graph).layout()
    return GraphRecorded(request.run_id, graph, layout, tuple(int(n) for n in x.shape), time.perf_counter() - start)


def values(bench, request: GraphValuesRequest, cancel: threading.Event | None = None):
    """`request.family`'s numbers on `request.graph`: one run's GraphValues, edits on vs off, or the loaded model
    against a second one (loaded, or kept, in `bench.second`) as a GraphComparison."""
    from .values.entry import DEFAULT_THRESHOLD, compare_edits, compare_runs, graph_values

    loaded, graph, edits = bench.loaded, request.graph, list(request.edits)
    threshold = DEFAULT_THRESHOLD if request.threshold is None else request.threshold
    x = input_of(bench, request.input, request.frame)
    if request.family == "values":
        return graph_values(loaded, x, graph, target=request.target, edits=edits, cancel=cancel)
    if request.family == "edits":
        return compare_edits(loaded, x, graph, edits, target=request.target, threshold=threshold, cancel=cancel)
    if request.family != "against":
        from ..common.errors import SpecError

        raise SpecError(f"The graph's values are those of one run (values), edits on vs off (edits) or against a "
                        f"second model (against), not {request.family!r}.")
    from ..workbench import Workbench

    if bench.second is None:
        bench.second = Workbench()
    second, _tree = bench.second.load(request.against)
    first_edits, second_edits = {"both": (edits, edits), "first": (edits, []),
                                 "second": ([], edits)}[request.edits_on]
    return compare_runs(loaded, second, x, graph, first_edits=first_edits, second_edits=second_edits,
                        target=request.target, threshold=threshold, names=request.names, cancel=cancel)
