"""Part of the worker (`Worker`): the graph of one forward of the loaded model on the input, recorded
(`inspector.core.graph.record_graph`, cancelled by the worker's cancel) and laid out with every top-level group
closed (`GraphLayout`). What goes back is plain records: a `GraphDrawn` (the torch-free graph, its first layout,
and the `GraphLayout` that lays out the next ones off the GUI thread), or a `Failure` whose one line the Graph tab
shows."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal

from inspector.core.records.failure import failure
from inspector.core.records.graph import GraphRequest

from ..common.gui_thread_signals import HeardOnGuiThread


@dataclass(frozen=True)
class GraphDrawn:
    """The graph the worker recorded for request `run_id`, and its first layout (top-level groups closed).
    `layouts` (a core GraphLayout) is handed over: from now on only the GUI's layout thread uses it (a remote
    engine's transport makes it here from the graph: `drawn`)."""

    run_id: int
    graph: object  # inspector.core.graph.Graph
    layouts: object  # inspector.core.graph.layout.graph_layout.GraphLayout
    layout: object  # inspector.core.graph.layout.graph_layout.Layout
    seconds: float = 0.0


def drawn(recorded) -> GraphDrawn:
    """The GraphDrawn of a `GraphRecorded` a remote engine sent: its GraphLayout made here, from the graph (the
    layout is torch-free and the same on both ends), to lay out the next views on the GUI's layout thread."""
    from inspector.core.graph.layout.graph_layout import GraphLayout

    return GraphDrawn(recorded.run_id, recorded.graph, GraphLayout(recorded.graph), recorded.layout,
                      recorded.seconds)


class GraphJobs:
    """Mixed into Worker (which has `bench`, `_cancel`, `sigAnswer` and `sigPhase`)."""

    def _record_graph(self, request: GraphRequest) -> None:
        from inspector.core.graph.served import record

        try:
            if not self.bench.holds(request.model):
                return  # another model was loaded meanwhile: the tab asks again for the one now shown
            recorded = record(self.bench, request, self._cancel, self._sigPhase.emit)
        except Exception as exc:  # noqa: BLE001 - the tab says it in one line; the tree still works
            self._sigAnswer.emit("graph", request.run_id, failure(exc, "graph", request.run_id))
            return
        self._sigAnswer.emit("graph", request.run_id, drawn(recorded))


class LayoutThread(HeardOnGuiThread, QObject):
    """Lays out a graph again (a group opened or closed) on a short-lived Python thread, latest wins: the
    layout is torch-free, so it never waits behind a run on the worker. One thread at a time uses a GraphLayout.

    Signals
    -------
    sigLayout(int, object): the token asked with, and a Layout (or a Failure).
    """

    _sigLayout = Signal(int, object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.hear_on_gui_thread()
        self._lock = threading.Lock()
        self._pending: tuple | None = None
        self._thread: threading.Thread | None = None

    def ask(self, layouts, open_groups, token: int) -> None:
        with self._lock:
            self._pending = (layouts, frozenset(open_groups), token)
            if self._thread is not None and self._thread.is_alive():
                return  # it takes this one up when the one in flight is done
            self._thread = threading.Thread(target=self._work, name="inspector-graph-layout", daemon=True)
            self._thread.start()

    def _work(self) -> None:
        while True:
            with self._lock:
                job, self._pending = self._pending, None
                if job is None:
                    return
            layouts, open_groups, token = job
            try:
                found = layouts.layout(open_groups)
            except Exception as exc:  # noqa: BLE001 - said in the tab
                found = failure(exc, "graph", token)
            try:
                self._sigLayout.emit(token, found)
            except RuntimeError:
                return  # the window went meanwhile

    def stop(self, timeout_s: float = 5.0) -> None:
        with self._lock:
            self._pending = None
            thread = self._thread
        if thread is not None:
            thread.join(timeout_s)
