"""Part of the worker (`Worker`): the values of a run at every node of a recorded graph, worked out on the worker
thread (torch lives there) and sent back as plain records: a core `GraphValues` (one run: activations, zeros,
NaN/Inf, gradients), a `GraphComparison` (edits on vs off, or the loaded model against a second one), or a
`Failure` whose one line the Graph tab's overlay row shows. The worker's cancel (Esc) stops it."""

from __future__ import annotations

from inspector.core.records.failure import failure
from inspector.core.records.graph import GraphValuesRequest

#: What a request asks for: one run's values, edited vs baseline, or the loaded model against a second one.
FAMILIES = ("values", "edits", "against")


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
        from inspector.core.graph.served import values

        return values(self.bench, request, self._cancel)
