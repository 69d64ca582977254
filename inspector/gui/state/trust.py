"""The trust cards asked for by "Check these maps": one map's card at a time (as Compare all asks for its maps), on
the loaded model and the input of the last run, each a `TrustRequest` in the worker's "check" lane. A card comes
back by sigCard; a cell the worker could not check by sigCardFailed, and the next is asked for; Esc (a cancelled
failure) stops the rest, the cards made staying (sigEnded says why), and so does an engine lost (a remote one: its
one line). On a remote engine the cards are made there, with the same seeds: the same numbers."""

from __future__ import annotations

import itertools

from PySide6.QtCore import QObject, Signal

from inspector.core.records.trust import TrustRequest


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
        self._ids = itertools.count(-1, -1)
        self.pending_id = 0
        self._queue: list[tuple[str, dict]] = []
        self._cell: str | None = None  # the cell whose card is being made (its request is `pending_id`)
        self.settings: dict = {}  # protocol, seed, threshold of the checks asked for
        worker.sigAnswer.connect(self._on_answer)
        app.sigFailed.connect(self._on_failed)

    @property
    def checking(self) -> bool:
        return self._cell is not None

    def check(self, cells: dict, protocol: str, seed: int | None, threshold: float = 0.5) -> bool:
        """Check every cell, one after another: `cells` maps a cell's name to {method, target, layer, options,
        original} (the map made, an Attribution). Every card is made from one seed (`seed`; None: one drawn here,
        so that the cards share it)."""
        from inspector.core.sources.seeds import new_seed

        self.settings = {"protocol": protocol, "seed": new_seed() if seed is None else seed, "threshold": threshold}
        self._queue, self._cell = list(cells.items()), None
        return self._ask_next()

    def forget(self) -> None:
        """Another comparison or model: a card still being made is dropped when it comes."""
        self.pending_id = 0
        self._queue, self._cell = [], None

    def _ask_next(self) -> bool:
        app = self.app
        if not self._queue:
            self._cell = None
            self.sigEnded.emit("")
            return False
        (self._cell, ask), self._queue = self._queue[0], self._queue[1:]
        if app.model is None or not app.input:
            self._queue, self._cell = [], None
            self.sigEnded.emit("Load a model and an input first.")
            return False
        self.pending_id = next(self._ids)
        options = tuple(sorted((k, v) for k, v in (ask.get("options") or {}).items() if k != "metrics"))
        self.worker.request_check(TrustRequest(app.model.request, app.input, app.device, ask["method"],
                                               ask.get("target") or "", ask.get("layer"), self.pending_id, options,
                                               original=ask.get("original"), **self.settings))
        return True

    def _on_answer(self, lane: str, request_id: int, card) -> None:
        if lane != "check" or request_id != self.pending_id or self._cell is None:
            return
        self.sigCard.emit(self._cell, card)
        self._ask_next()

    def _on_failed(self, failure) -> None:
        if failure.what != "checks" or failure.run_id != self.pending_id or self._cell is None:
            return
        self.sigCardFailed.emit(self._cell, failure.message)
        if failure.cancelled or failure.kind == "EngineError":  # Esc, or a remote engine lost
            self._queue, self._cell = [], None
            self.sigEnded.emit(failure.message)
        else:
            self._ask_next()
