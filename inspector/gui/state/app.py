"""The app's one state: what the user asked for, what is actually loaded, and the last result.

Views and docks call its methods and observe its signals; they never reach into each
other. It alone builds run requests (from what is *loaded*, never from a choice that
failed), talks to the worker, and decides what a failure leaves behind: the model, weights
and input that last worked stay loaded, the choosers are told to show them again, and a
failed choice is never written to the settings.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QObject, QTimer, Signal

from inspector.core.common.errors import InspectorError
from inspector.core.inputs.samples import names_a_folder
from inspector.core.inputs.video import is_video
from inspector.core.records.detections import is_box_in_pixels
from inspector.core.records.failure import Failure
from inspector.core.records.requests import ModelRequest, RunRequest

from ..common.gc_collector import freeze_imports
from ..common.notice import Notice
from ..worker.local import WorkerThread
from . import endings
from .analysis import AnalysisState
from .atlas import AtlasState
from .edits import EditsState
from .folder import FolderState
from .graph import GraphState
from .held import HeldArrays
from .live import LiveState
from .model_loaded import offer_attention, on_loaded
from .result_shown import on_result
from .run_choices import (
    layer_names_of,
    run_request,
    listed_device,
    panel_keys_of,
    sites_of,
    visible_of,
)
from .settings import SettingsStore

#: The gradient shown beside the activations: label -> site (or parameter suffix).
GRADIENT_SITES = {"grad_output": "grad_output", "grad_input": "grad_input", "weight gradient": "weight:grad",
                  "bias gradient": "bias:grad", "attention (per head)": "attention"}
AskTrust = Callable[[str, str], bool]  # (file or source, what loading it does) -> go on?
#: The views of the central tabs, by the name the state knows them by.
VIEWS = ("layer", "graph", "compare", "attribution", "flow", "stats")


class AppState(QObject):
    """Signals
    -------
    sigEngineReady(object): [(device, description)] once the engine has loaded.
    sigModelShown(object): the ModelRequest the choosers must show (being loaded, or loaded again after a failure).
    sigModelLoaded(object, object): a ModelInfo, and the ticks to apply (set).
    sigInputShown(str), sigDeviceShown(str), sigTargetShown(str), sigGradSiteShown(str): choosers to update.
    sigTicksSet(object): ticks set by the state (a session, a restore, a click), for the module tree.
    sigEditsSet(object): the edits changed (by the edits panel, a preset, a click, a session).
    sigLayerSelected(object): the layer shown in the Layer tab (str or None).
    sigResult(object): a fresh RunOutcome (stale ones are dropped here); only the visible layer's
        captures have statistics yet.
    sigStatsUpdated(object): the same RunOutcome, now with every statistic (and then again with its
        diagnostics, `outcome.analysis`).
    sigStatsStopped(object): Esc stopped the rest of that RunOutcome's statistics (F5 works them out).
    sigFailed(object): a Failure worth showing.
    sigNotice(object): a Notice for the message banner (errors, warnings, confirmations).
    sigAutoRun(bool): auto-run was switched on or off (by the user, or off because warm runs are slow).
    sigUnrun(bool): with auto-run off, a change waits for F5 (True), or the last change ran (False).
    sigNoticeOver(str): what a Notice was about is over ("run": a run worked), so it goes.
    sigPhase(str): what is happening ("" when idle).
    sigQuerySet(int): the token whose attention the panels draw (0: the class token).
    sigAgainstSet(object): the second model the Compare tab compares with (a ModelRequest), or None
        (the edited run against its baseline).
    sigViewShown(str): the central view now on screen (one of VIEWS); hidden views draw when shown.
    sigProgress(int, int): the run's progress (steps done, steps in all).
    sigBusy(bool): the worker started or finished something the user can cancel.
    sigCatalogue(object): the model catalogue the model chooser offers.
    sigEngineWhere(str): where the engine is, for the status bar ("engine ws://host:port · cpu"; a remote engine
        only, said when it connects and when it is lost).

    The parts with their own signals: `folder` (FolderState), `live` (LiveState), `atlas`
    (AtlasState), `analysis` (AnalysisState), `graph` (GraphState: the Graph tab's graph and values),
    `editing` (EditsState: every change to the edits), `held` (HeldArrays: a remote engine's arrays of the layer
    shown).
    """

    sigEngineReady = Signal(object)
    sigModelShown = Signal(object)
    sigModelLoaded = Signal(object, object)
    sigInputShown = Signal(str)
    sigDeviceShown = Signal(str)
    sigTargetShown = Signal(str)
    sigGradSiteShown = Signal(str)
    sigTicksSet = Signal(object)
    sigEditsSet = Signal(object)
    sigLayerSelected = Signal(object)
    sigResult = Signal(object)
    sigStatsUpdated = Signal(object)
    sigStatsStopped = Signal(object)
    sigFailed = Signal(object)
    sigNotice = Signal(object)
    sigNoticeOver = Signal(str)
    sigPhase = Signal(str)
    sigAutoRun = Signal(bool)
    sigUnrun = Signal(bool)
    sigQuerySet = Signal(int)
    sigAgainstSet = Signal(object)
    sigViewShown = Signal(str)
    sigProgress = Signal(int, int)
    sigBusy = Signal(bool)
    sigCatalogue = Signal(object)
    sigEngineWhere = Signal(str)

    def __init__(self, settings, ask_trust: AskTrust, parent: QObject | None = None, engine: str | None = None,
                 token_file=None) -> None:
        """`engine`: the URL of a `network-inspector serve` to run on (`token_file`: its token), instead of a
        worker thread in this process."""
        super().__init__(parent)
        self.store = SettingsStore(settings)
        self.ask_trust = ask_trust
        self.engine_url = engine
        if engine is None:
            self.worker_thread = WorkerThread(start=False)
        else:
            from ..worker.remote import RemoteWorkerThread

            self.worker_thread = RemoteWorkerThread(engine, token_file, start=False)
        self.worker = self.worker_thread.worker
        self._ids = itertools.count(1)
        self.devices: list[tuple[str, str]] | None = None  # None until the engine has loaded
        self.model = None  # ModelInfo of what is loaded
        # While a newly loaded model has not run yet: (the model that had, its ticks), or (None, None) when
        # none had. A model counts as loaded once a run on it worked; when its first run fails the app goes
        # back to the one before (`endings.back_to_the_last_that_ran`), and only a model that ran is remembered.
        self.trying: tuple | None = None
        self.back_to: ModelRequest | None = None  # the model that ran, being gone back to
        self.loading: ModelRequest | None = None  # asked for, not loaded yet
        self.input = ""  # what runs use
        self.good_input = ""  # the last input a run succeeded on
        self.folder = FolderState(self)
        self.live = LiveState(self)
        self.atlas = AtlasState(self, self.worker)
        self.analysis = AnalysisState(self, self.worker)
        self.graph = GraphState(self, self.worker)
        self.held = HeldArrays(self, self.worker)
        self.editing = EditsState(self)
        self.device = "cpu"
        self.target = "auto"
        self.ticks: frozenset[str] = frozenset()
        self.edits: tuple = ()
        self.layer: str | None = None
        self.grad_site = "grad_output"
        self.query = 0  # the token whose attention the panels draw
        self.view = "layer"  # the central view on screen
        self.against: ModelRequest | None = None  # a second model to compare with (None: the baseline)
        self.edits_on = "both"  # with a second model: which side the edits apply to (both, first, second)
        self.auto_run = True
        self.runs_of_model = 0  # results of the loaded model: the first (cold) one never judges run time
        self.outcome = None
        self.phase = ""  # what the worker is doing now ("" when idle)
        self.last_run_id = 0
        self.asked_on: dict[int, tuple[str, str]] = {}  # run id -> the (input, target) it was asked on
        self.shown_choice: tuple[str, str] | None = None  # the (input, target) of the result on screen
        self._last_sites: frozenset[str] = frozenset()
        self.next_ticks: set[str] | None = None  # ticks to apply when the model loads
        self.pending_target: str | None = None  # a target to choose when the model loads (a session)
        self.pending_edits: tuple | None = None  # edits to run the model with once it loads (a session)
        self.timer = QTimer(self, singleShot=True, interval=0)  # changes made in one go -> one request
        self.timer.timeout.connect(self.run)
        w = self.worker
        w.sigEngineReady.connect(self._on_engine_ready)
        w.sigLoaded.connect(self._on_loaded)
        w.sigResult.connect(self._on_result)
        w.sigStatsUpdate.connect(self._on_stats_update)
        w.sigFailed.connect(self._on_failed)
        w.sigPhase.connect(self._on_phase)
        w.sigProgress.connect(self.sigProgress)
        w.sigBusy.connect(self.sigBusy)
        w.sigAnswer.connect(self._on_answer)
        if engine is not None:
            w.sigWhere.connect(self.sigEngineWhere)

    # -- starting and stopping ------------------------------------------------------------
    def start(self, restore: bool = True, engine: bool = True) -> None:
        """Restore (or open the demo); `engine` False: what is asked waits for worker_thread.start()."""
        if engine:
            self.worker_thread.start()
        self.store.restore(self) if restore else self.request_model(ModelRequest())

    def stop(self) -> None:
        self.timer.stop()
        self.live.stop()
        self.store.save(self)
        self.worker_thread.stop()

    # -- what the user asks for -------------------------------------------------------------
    def request_model(self, request: ModelRequest, ticks: set[str] | None = None) -> None:
        if request != self.back_to:  # another model asked for: what was said of the last one's failure goes
            self.sigNoticeOver.emit("model")
        self.loading = request
        self.next_ticks = ticks
        self.sigModelShown.emit(request)
        self.worker.request_load(request, self.usable_device())

    def usable_device(self) -> str:
        """The device picked, or the CPU while this machine does not have it (or has not listed its devices:
        a model loads there, and its first run moves it)."""
        return self.device if self.devices is not None and self.device in dict(self.devices) else "cpu"

    def request_catalogue(self) -> None:
        """Ask the worker for the model catalogue (sigCatalogue brings it)."""
        self.worker.request_catalogue()

    def open_trusted(self, request: ModelRequest, name: str, what: str) -> bool:
        """Load a source that runs code, after the user said they trust it."""
        if not self.ask_trust(name, what):
            self.notify("info", f"Not loaded: {name}. Nothing was run.")
            return False
        self.request_model(replace(request, trust=True))
        return True

    def set_input(self, source: str) -> None:
        """Run on `source` (a file, `sample:NAME`, or a folder to step through)."""
        source = source.strip()
        if not source or source in (self.input, self.folder.root()):
            return
        if self.folder.root():  # the folder is left: what was said of its files goes
            self.sigNoticeOver.emit("folder")
        if Path(source).is_dir() if self.engine_url is None else names_a_folder(source):  # (a server's: by its name)
            self.folder.open(source)
            return
        if is_video(source):
            self.live.open(source)
            return
        self.live.stop()
        self.folder.close()
        self.use_input(source)

    def use_input(self, source: str, shown: str | None = None) -> None:
        """Run on `source`, the chooser showing `shown` (a folder's root while it is stepped through). A box
        clicked on the last image is no box of this one: the target goes back to auto (a video's frames keep
        it, following the object by IoU)."""
        self.input = source
        self.forget_box()
        self.sigInputShown.emit(shown or source)
        self.schedule_run()

    def forget_box(self) -> None:
        if is_box_in_pixels(self.target):
            self.target = "auto"
            self.sigTargetShown.emit(self.target)

    def set_device(self, name: str) -> None:
        self.device = name = listed_device(name, self.devices)
        self.sigDeviceShown.emit(name)
        if self.devices is not None and name not in dict(self.devices):
            self.notify("warning", f"This machine has no device {name!r} (it has {', '.join(dict(self.devices))}). "
                                   f"Runs wait until you pick one.", ("Use the CPU", lambda: self.set_device("cpu")))
            return
        self.schedule_run()

    def set_target(self, target: str) -> None:
        """What the runs explain; the Target chooser shows it, whoever chose it (the chooser, a clicked box,
        a drawn region, a session, code)."""
        self.target = target
        self.sigTargetShown.emit(target)
        self.schedule_run()

    def set_ticks(self, ticks) -> None:
        ticks = frozenset(ticks)
        if ticks != self.ticks:
            self.ticks = ticks
            if self.model is not None:
                self.store.save_ticks(self.model.source, ticks)
            self.schedule_run()

    def tick_and_show(self, path: str) -> None:
        """Tick `path` (the module tree shows it ticked) and make it the layer shown; a run follows."""
        self.set_ticks(set(self.ticks) | {path})
        self.sigTicksSet.emit(set(self.ticks))
        self.select_layer(path)
        self.schedule_run(force=True)

    def set_edits(self, edits, undoable: bool = True) -> None:
        edits = tuple(edits)
        if edits != self.edits:
            if undoable:
                self.editing.remember(self.edits)
            self.edits = edits
            self.sigEditsSet.emit(edits)
            self.schedule_run(force=True)

    def select_layer(self, layer: str | None) -> None:
        if layer != self.layer:
            self.layer = layer
            self.sigLayerSelected.emit(layer)

    def select_grad_site(self, label: str) -> None:
        self.grad_site = GRADIENT_SITES[label] if label in GRADIENT_SITES else label
        self.sigGradSiteShown.emit(self.grad_site)
        if self.grad_site == "attention":
            offer_attention(self)
        if self.outcome is None or not self.sites() <= self._last_sites:
            self.schedule_run(force=True)

    def set_query(self, token: int) -> None:
        """The token whose attention is drawn (no re-run: every query is in the captured probabilities)."""
        if token != self.query:
            self.query = token
            self.sigQuerySet.emit(token)

    def set_view(self, view: str) -> None:
        """The central view now on screen (the user picked its tab, or the state was asked to show it)."""
        if view not in VIEWS:
            raise ValueError(view)
        if view == self.view:
            return
        self.view = view
        self.sigViewShown.emit(view)
        if view == "compare" and (self.edits_active() or self.against is not None) and self.outcome is not None and self.outcome.result.input_grad is None:
            self.schedule_run(force=True)  # the comparison shows the input gradient too

    def set_against(self, request: ModelRequest | None) -> None:
        """Compare with a second model (None: the edited run against its no-edit baseline)."""
        if request != self.against:
            self.against = request
            self.sigAgainstSet.emit(request)
            self.schedule_run(force=True)

    def set_edits_on(self, which: str) -> None:
        """With a second model: the edits apply to `both`, the `first` or the `second` model."""
        if which not in ("both", "first", "second"):
            raise ValueError(which)
        if which != self.edits_on:
            self.edits_on = which
            if self.against is not None and self.edits:
                self.schedule_run(force=True)

    def set_auto_run(self, on: bool) -> None:
        if on != self.auto_run:
            self.auto_run = on
            self.sigAutoRun.emit(on)
            if on:
                self.schedule_run()  # a change that waited for F5 runs now

    def notify(self, level: str, text: str, action=None, details: str = "", about: str = "") -> None:
        """A message for the banner; `about`: what it is about, taken down when that is over (sigNoticeOver):
        "run", a run's error, once a run works; "model", once another model is asked for; "folder", once the
        folder is left."""
        self.sigNotice.emit(Notice(level, text, details, action, about))

    # -- runs ------------------------------------------------------------------------------
    def ticked(self) -> list[str]:
        """The ticked layers in model order."""
        if self.model is None:
            return sorted(self.ticks)
        return [l.path for l in self.model.tree.layers if l.path in self.ticks]

    def edits_active(self) -> bool:
        return any(e.enabled for e in self.edits)

    def sites(self) -> frozenset[str]:
        return sites_of(self.grad_site, self.edits)

    def panel_keys(self, name: str) -> tuple[str, str]:
        return panel_keys_of(name, self.grad_site)

    def build_request(self) -> RunRequest | None:
        """What to run now (`run_choices.run_request`)."""
        return run_request(self, self._ids)

    def layer_names(self) -> list[str]:
        return layer_names_of(self.outcome.result) if self.outcome is not None else []

    def visible_layers(self) -> tuple[str, ...]:
        return visible_of(self.ticked(), self.layer)

    def run(self) -> bool:
        """Send a run of what the user asked for to the worker; False when there is nothing to run."""
        try:
            request = self.build_request()
        except InspectorError as exc:
            self.notify("error", str(exc))
            return False
        if request is None:
            return False
        self.last_run_id = request.run_id
        self.sigUnrun.emit(False)
        self.asked_on = {request.run_id: (request.input, self.target)}
        self._last_sites = request.spec.sites
        self.worker.request_run(request)
        return True

    def schedule_run(self, force: bool = False) -> None:
        """Run soon (coalesced) when auto-run is on, or always when `force` (an edit changed)."""
        if self.auto_run or force:
            self.timer.start()
        else:
            self.sigUnrun.emit(True)  # said beside the Auto-run switch: nothing runs until F5

    def cancel(self) -> None:
        """Esc (`endings.cancel`)."""
        endings.cancel(self)

    def result_drawn(self) -> None:
        """The window drew the last result's panels: the worker goes on (a live input: the next frame)."""
        self.worker.result_drawn()
        self.live.drawn()

    # -- what the worker says ---------------------------------------------------------------
    def _on_answer(self, lane: str, run_id: int, found) -> None:
        if lane == "catalogue":
            self.sigCatalogue.emit(found)

    def _on_failed(self, failure: Failure) -> None:
        endings.on_failed(self, failure)

    def _on_engine_ready(self, devices) -> None:
        freeze_imports()
        self.devices = list(devices)
        self.device = listed_device(self.device, self.devices)  # before the device list is shown
        self.sigEngineReady.emit(self.devices)
        self.set_device(self.device)  # says so if a restored device is missing here

    def _on_loaded(self, info) -> None:
        on_loaded(self, info)

    def _on_result(self, outcome) -> None:
        on_result(self, outcome)

    def _on_phase(self, phase: str) -> None:
        self.phase = phase
        self.sigPhase.emit(phase)

    def _on_stats_update(self, update) -> None:
        outcome = self.outcome
        if outcome is None or update.run_id != outcome.run_id:
            return  # for a result that was dropped
        update.apply(outcome)
        self.sigStatsUpdated.emit(outcome)
        self.held.ask()
