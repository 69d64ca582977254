"""Only what is seen crosses (`AppState.held`): a remote engine holds back the arrays of layers not shown, and
they are asked for when a layer is shown; a local engine holds nothing back, so nothing is asked. The arrays of
the result on screen come once its statistics are done (the engine keeps them then) and are put into it."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from inspector.core.records.failure import Failure


class HeldArrays(QObject):
    """Signals
    -------
    sigArrived(object): the arrays asked for (`fetch`) came for the RunOutcome on screen, and are in it now: the
        layer shown is drawn again.
    """

    sigArrived = Signal(object)

    def __init__(self, app, worker) -> None:
        super().__init__(app)
        self.app, self.worker = app, worker
        self._wanted: tuple[int, tuple[str, ...]] | None = None  # (run id, names) of held arrays to ask for
        worker.sigAnswer.connect(self._on_answer)

    def fetch(self, layer: str | None) -> bool:
        """Ask a remote engine for the arrays of `layer` it held back from the result on screen (they come once
        that run's statistics are done; sigArrived then); False when there are none to ask for."""
        from inspector.protocol.seen import layer_of

        outcome, ask = self.app.outcome, getattr(self.worker, "request_arrays", None)
        if outcome is None or ask is None or not layer:
            return False
        names = tuple(n for n in outcome.result.held if layer_of(n) == layer)
        if outcome.baseline is not None and outcome.baseline is not outcome.result:
            names += tuple(f"baseline/{n}" for n in outcome.baseline.held if layer_of(n) == layer)
        if not names:
            return False
        self._wanted = (outcome.run_id, names)
        self.ask()
        return True

    def ask(self) -> None:
        """Send what `fetch` wanted once the result on screen is complete (its statistics done), when the
        engine keeps its arrays; AppState calls this after each statistics update."""
        outcome, wanted = self.app.outcome, self._wanted
        if outcome is None or wanted is None or wanted[0] != outcome.run_id:
            return
        if outcome.complete and (not outcome.analyse or outcome.analysis is not None):  # the engine keeps it now
            self._wanted = None
            self.worker.request_arrays(*wanted)

    def _on_answer(self, lane: str, run_id: int, found) -> None:
        if lane != "arrays":
            return
        from inspector.protocol.seen import with_arrays

        outcome = self.app.outcome
        if outcome is None or run_id != outcome.run_id:
            return  # for a result no longer on screen
        if isinstance(found, Failure):
            self.app.notify("warning", f"The layer's arrays did not come: {found.message}")
            return
        with_arrays(outcome.result, {n: a for n, a in found.items() if not n.startswith("baseline/")})
        if outcome.baseline is not None and outcome.baseline is not outcome.result:
            with_arrays(outcome.baseline, {n[len("baseline/"):]: a for n, a in found.items()
                                           if n.startswith("baseline/")})
        self.sigArrived.emit(outcome)
