"""Attribution maps asked for from the Attribution tab (`AppState.analysis`): one request at a
time, latest wins, on the loaded model and the input of the last run."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from inspector.core.records.requests import AttributionRequest

from .cells import Cells


class AnalysisState(QObject):
    """Signals
    -------
    sigAttribution(object): the Attribution of the request last sent.
    sigAttributionFailed(str): why the request last sent failed.
    sigChoiceRestored(object): a session's attribution choice (a dict, see `choice`) to show in the tab.
    sigCompared(str, object): a comparison's cell (its name) has its Attribution.
    sigCompareFailed(str, str): a comparison's cell failed (name, why); the comparison goes on.
    sigCompareEnded(str): the comparison is over: "" when every cell came, else why it stopped (cancelled).
    """

    sigAttribution = Signal(object)
    sigAttributionFailed = Signal(str)
    sigChoiceRestored = Signal(object)
    sigCompared = Signal(str, object)
    sigCompareFailed = Signal(str, str)
    sigCompareEnded = Signal(str)

    def __init__(self, app, worker) -> None:
        super().__init__(app)
        self.app, self.worker = app, worker
        self.cells = Cells()  # a comparison's; its ids are every attribution request's, a single map's too
        self.choice: dict | None = None  # the last single method asked for: what a session keeps
        self.found = None  # the map made for `choice` (an Attribution): a session keeps it too
        self.restored = None  # (a session's map, its model's source), shown with that model's first result
        self._single_id = 0  # the request of `choice` (not a step of Compare all)
        worker.sigAnswer.connect(self._on_answer)

    def forget(self) -> None:
        """Another model: a map still being made for the last one is dropped when it comes."""
        self.cells.forget()
        self.found = None

    @property
    def comparing(self) -> bool:
        """A comparison is being made (a cell asked for, or more to ask for)."""
        return self.cells.busy

    @property
    def pending_id(self) -> int:
        """The id of the request last sent (what another one answers is dropped)."""
        return self.cells.pending

    @pending_id.setter
    def pending_id(self, request_id: int) -> None:
        self.cells.pending = request_id

    def compare(self, cells: dict) -> bool:
        """Make every cell of a comparison, one after another (latest-wins stays: one request at a time, Esc
        stops the rest): `cells` maps a cell's name to (method, target, layer, options) as `request_attribution`
        takes them. Each cell comes back by sigCompared or sigCompareFailed, then sigCompareEnded."""
        self.cells.start((name, tuple(ask)) for name, ask in cells.items())
        return self._ask_next()

    def _ask_next(self) -> bool:
        ask = self.cells.take()
        if ask is None:
            self.sigCompareEnded.emit("")
            return False
        method, target, layer, options = ask
        return self._send(method, target, layer, {**(options or {}), "compare": True})

    def restore(self, choice: dict | None, model: str | None = None) -> None:
        """A session's choice: kept (saved again with the next session) and shown in the tab; the map it
        kept (`stored`) is shown with the first result of its model (`model`), not made again."""
        from inspector.core.session.stored import attribution_of  # torch: kept out of the window's start

        choice = dict(choice) if choice else None
        stored = choice.pop("stored", None) if choice else None
        self.choice, self.found = choice, None
        self.restored = (attribution_of(stored), model) if stored is not None else None
        if choice:
            self.sigChoiceRestored.emit(dict(choice))

    def take_restored(self, model: str):
        """The session's map, once, when `model`'s result is on screen (None otherwise)."""
        if self.restored is None or self.restored[1] != model:
            return None
        found, self.restored = self.restored[0], None
        self.found = found
        return found

    def request_attribution(self, method: str, target: str, layer, options: dict | None = None) -> bool:
        """Ask for `method`'s map; `options`: the method's (AttributionOptions.values), "metrics" among them.
        A comparison being made stops: this map is what is asked for now."""
        self.cells.stop()
        return self._send(method, target, layer, options)

    def _send(self, method: str, target: str, layer, options: dict | None) -> bool:
        app = self.app
        if app.model is None or not app.input:
            self._fail("Load a model and an input first.")
            return False
        options = dict(options or {})
        metrics = tuple(options.pop("metrics", ()))
        single = not options.pop("compare", False)  # one method on its own (not a step of Compare all)
        if single:
            self.choice = {"method": method, "target": target or "", "layer": layer,
                           "options": {k: v for k, v in options.items() if v is not None}, "metrics": list(metrics)}
            self.found = None
        self.cells.new_id()
        if single:
            self._single_id = self.pending_id
        self.worker.request_attribution(AttributionRequest(app.model.request, app.input, app.device, method,
                                                           target or app.target, layer, self.pending_id,
                                                           tuple(sorted(options.items())), metrics))
        return True

    def _on_answer(self, lane: str, request_id: int, found) -> None:
        if lane == "attribution":
            self._on_attribution(request_id, found)

    def _on_attribution(self, request_id: int, found) -> None:
        if request_id != self.pending_id:
            return
        if self.cells.busy:
            self.sigCompared.emit(self.cells.name, found)
            self._ask_next()
            return
        if request_id == self._single_id:
            self.found = found
        self.sigAttribution.emit(found)

    def failed(self, failure) -> None:
        if failure.run_id == self.pending_id:
            self._fail(failure.message, failure.cancelled)

    def _fail(self, message: str, cancelled: bool = False) -> None:
        """What was asked for failed: a comparison's cell says so and the next is asked for; a cancelled one
        (Esc) stops the comparison."""
        if not self.cells.busy:
            self.sigAttributionFailed.emit(message)
            return
        self.sigCompareFailed.emit(self.cells.name, message)
        if cancelled:
            self.cells.stop()
            self.sigCompareEnded.emit(message)
        else:
            self._ask_next()
