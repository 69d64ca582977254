"""What the Graph tab asks of the worker (`AppState.graph`): the graph of the loaded model recorded on an input and
laid out, and a run's values on its nodes (one run's, edited vs baseline, or against a second model); latest wins
for each. The Graph tab's controllers ask here and hear the answers here, as the other views do their states'."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from inspector.core.records.requests import ModelRequest

from ..worker.graph import GraphRequest
from ..worker.graph_values import GraphValuesRequest


class GraphState(QObject):
    """Signals
    -------
    sigGraph(int, object): the id a graph was asked with, and a GraphDrawn (recorded and laid out), or a Failure.
    sigValues(int, object): the id values were asked with, and a GraphValues or GraphComparison, or a Failure.
    """

    sigGraph = Signal(int, object)
    sigValues = Signal(int, object)

    def __init__(self, app, worker) -> None:
        super().__init__(app)
        self.app, self.worker = app, worker
        worker.sigAnswer.connect(self._on_answer)

    def _on_answer(self, lane: str, asked_id: int, found) -> None:
        if lane == "graph":
            self.sigGraph.emit(asked_id, found)
        elif lane == "values":
            self.sigValues.emit(asked_id, found)

    def record(self, model: ModelRequest, input: str, graph_id: int, frame=None) -> None:
        """Record the graph of `model` (loaded) on `input` (with `frame`: that video frame's pixels) and lay it
        out; sigGraph brings it with `graph_id`."""
        self.worker.request_graph(GraphRequest(model, input, graph_id, frame))

    def values(self, model: ModelRequest, input: str, graph, family: str, target: str, values_id: int,
               names: tuple[str, str], frame=None) -> None:
        """Work out `family`'s numbers on `graph` (recorded for `model` on `input`) with the edits switched on, and
        the second model and which side the edits go to when `family` is "against"; sigValues brings them with
        `values_id`."""
        app = self.app
        self.worker.request_graph_values(GraphValuesRequest(
            model, input, graph, family, tuple(e for e in app.edits if e.enabled), app.against, app.edits_on,
            target, values_id, names, frame))
