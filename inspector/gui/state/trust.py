"""The trust cards asked for by "Check these maps": one map's card at a time (as Compare all asks for its maps), on
the loaded model and the input of the last run, each a `TrustRequest` in the worker's "check" lane. A card comes
back by sigCard; a cell the worker could not check by sigCardFailed, and the next is asked for; Esc (a cancelled
failure) stops the rest, the cards made staying (sigEnded says why), and so does an engine lost (a remote one: its
one line). On a remote engine the cards are made there, with the same seeds: the same numbers."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from inspector.core.records.trust import TrustRequest

from .cells import Cells


class TrustState(QObject):
    """Signals
    -------
    sigCard(str, object): a cell (its name) has its TrustCard.
    sigCardFailed(str, str): a cell could not be checked (name, why); the checks go on.
    sigEnded(str): the checks are over: "" when every cell was checked, else why they stopped (Esc).
    """

    sigCard = Signal(str, object)
    sigCardFailed = Signal(str, str)
    sigEnded = Signal(str)

    def __init__(self, app, worker) -> None:
        super().__init__(app)
        self.app, self.worker = app, worker
        self.cells = Cells()  # the cards to make, one at a time
        self.settings: dict = {}  # protocol, seed, threshold of the checks asked for
        worker.sigAnswer.connect(self._on_answer)
        app.sigFailed.connect(self._on_failed)

    @property
    def checking(self) -> bool:
        return self.cells.busy

    def check(self, cells: dict, protocol: str, seed: int | None, threshold: float = 0.5) -> bool:
        """Check every cell, one after another: `cells` maps a cell's name to {method, target, layer, options,
        original} (the map made, an Attribution). Every card is made from one seed (`seed`; None: one drawn here,
        so that the cards share it)."""
        from inspector.core.sources.seeds import new_seed

        self.settings = {"protocol": protocol, "seed": new_seed() if seed is None else seed, "threshold": threshold}
        self.cells.start(cells.items())
        return self._ask_next()

    def forget(self) -> None:
        """Another comparison or model: a card still being made is dropped when it comes."""
        self.cells.forget()

    def _ask_next(self) -> bool:
        app = self.app
        ask = self.cells.take()
        if ask is None:
            self.sigEnded.emit("")
            return False
        if app.model is None or not app.input:
            self.cells.stop()
            self.sigEnded.emit("Load a model and an input first.")
            return False
        options = tuple(sorted((k, v) for k, v in (ask.get("options") or {}).items() if k != "metrics"))
        self.worker.request_check(TrustRequest(app.model.request, app.input, app.device, ask["method"],
                                               ask.get("target") or "", ask.get("layer"), self.cells.new_id(), options,
                                               original=ask.get("original"), **self.settings))
        return True

    def _on_answer(self, lane: str, request_id: int, card) -> None:
        if lane != "check" or not self.cells.answers(request_id):
            return
        self.sigCard.emit(self.cells.name, card)
        self._ask_next()

    def _on_failed(self, failure) -> None:
        if failure.what != "checks" or not self.cells.answers(failure.run_id):
            return
        self.sigCardFailed.emit(self.cells.name, failure.message)
        if failure.cancelled or failure.kind == "EngineError":  # Esc, or a remote engine lost
            self.cells.stop()
            self.sigEnded.emit(failure.message)
        else:
            self._ask_next()
