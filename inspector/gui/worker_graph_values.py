"""Part of the worker (`Worker`): the values of a run at every node of a recorded graph, worked out on the worker
thread (torch lives there) and sent back as plain records: a core `GraphValues` (one run: activations, zeros,
NaN/Inf, gradients), a `GraphComparison` (edits on vs off, or the loaded model against a second one), or a
`Failure` whose one line the Graph tab's overlay row shows. The worker's cancel (Esc) stops it."""

from __future__ import annotations

from dataclasses import dataclass, field

from inspector.core.records.failure import failure
from inspector.core.records.requests import ModelRequest

#: What a request asks for: one run's values, edited vs baseline, or the loaded model against a second one.
FAMILIES = ("values", "edits", "against")


@dataclass(frozen=True)
class GraphValuesRequest:
    """Work out `family`'s numbers on `graph` (the torch-free Graph the worker recorded for `model` on `input`).

    `edits`: the enabled edits (core `Edit`s) of the run (`values`: applied; `edits`: on vs off; `against`: to
    the sides `edits_on` says). `against`: the second model's request, `names` the two models' as the Compare tab
    says them. `target`: the objective as text."""

    model: ModelRequest
    input: str
    graph: object = field(compare=False, repr=False)  # inspector.core.graph.Graph
    family: str = "values"
    edits: tuple = ()
    against: ModelRequest | None = None
    edits_on: str = "both"
    target: str = "auto"
    run_id: int = 0
    names: tuple[str, str] = ("first", "second")  # how the two models are called (Against)
    frame: object = field(default=None, compare=False, repr=False)


class GraphValuesJobs:
    """Mixed into Worker (which has `bench`, `_cancel`, `sigAnswer` and `sigPhase`)."""

    def _graph_values(self, request: GraphValuesRequest) -> None:
        try:
            if not self.bench.holds(request.model):
                raise RuntimeError("Another model was loaded meanwhile; run again to colour this one's graph.")
            self._sigPhase.emit("Working out the graph's values")
            found = self._values_of(request)
        except Exception as exc:  # noqa: BLE001 - the overlay row says it in one line; the graph stays drawn
            self._sigAnswer.emit("values", request.run_id, failure(exc, "graph values", request.run_id))
            return
        self._sigAnswer.emit("values", request.run_id, found)

    def _values_of(self, request: GraphValuesRequest):
        from inspector.core.graph.values import compare_edits, compare_runs, graph_values

        loaded, graph, edits = self.bench.loaded, request.graph, list(request.edits)
        x = self.bench.input_tensor(request.input, request.frame)
        if request.family == "values":
            return graph_values(loaded, x, graph, target=request.target, edits=edits, cancel=self._cancel)
        if request.family == "edits":
            return compare_edits(loaded, x, graph, edits, target=request.target, cancel=self._cancel)
        from inspector.core.workbench import Workbench

        if self.bench.second is None:
            self.bench.second = Workbench()
        second, _tree = self.bench.second.load(request.against)
        first_edits, second_edits = {"both": (edits, edits), "first": (edits, []),
                                     "second": ([], edits)}[request.edits_on]
        return compare_runs(loaded, second, x, graph, first_edits=first_edits, second_edits=second_edits,
                            target=request.target, names=request.names, cancel=self._cancel)
