"""The worker thread: owns the loaded model on its device; runs requests, latest wins.

The GUI thread sends immutable requests, each into its lane of one mailbox (`inspector.protocol.lanes.Lanes`,
the rule every transport of the engine protocol keeps): a newer request replaces the one still waiting in its
lane, and a model's load drops the run waiting for the model before, so live toggling never builds a backlog.
Every request gets an id (`request_*` return it) and can be cancelled by it. The lanes are served in `LANES`'
order. Results carry the request's run id; the state drops stale ones. Errors come back as `Failure` records,
never as exceptions in the event loop. Only plain records cross the thread: a `ModelInfo`, never the module.

The engine (torch) is imported on this thread when it starts, so the window is on
screen before it has loaded.
"""

from __future__ import annotations

import itertools
import threading
import traceback

from PySide6.QtCore import Signal, Slot

from inspector.core.common.errors import InspectorError, RunCancelled
from inspector.core.records.failure import failure
from inspector.core.records.requests import ModelRequest, RunRequest
from inspector.protocol.kinds import DRAWN_WAIT_S
from inspector.protocol.lanes import Lanes

from ..common.gc_collector import GuiThreadCollector
from ..common.gui_thread_signals import HeardOnGuiThread
from ..common.progress_rate import rate_reporter
from .atlas import AtlasJobs
from .graph import GraphJobs
from .graph_values import GraphValuesJobs
from .signals import EngineSignals
from .thread import OneThread
from .trust import TrustJobs

#: The worker's lanes, in the order it serves them: the model catalogue, a model's load (with the device it goes
#: to), a run, the rest of a result's statistics (`finish`), an attribution, an atlas opened or built, a channel's
#: pictures, a graph recorded, the values on a graph, a map's trust card. One request waits in each; a load drops the
#: waiting run.
LANES = ("catalogue", "model", "run", "finish", "attribution", "atlas", "pictures", "graph", "values", "check")
#: The method that serves a lane's request as it is (the catalogue, a load and `finish` are served apart).
SERVES = {"run": "_run", "attribution": "_attribute", "atlas": "_run_atlas", "pictures": "_run_atlas",
          "graph": "_record_graph", "values": "_graph_values", "check": "_check_maps"}


class Worker(HeardOnGuiThread, AtlasJobs, GraphJobs, GraphValuesJobs, TrustJobs, EngineSignals):
    """Signals
    -------
    sigEngineReady(object): the devices this machine has, [(name, description)], once torch is imported.
    sigLoaded(object): a ModelInfo after a model (re)load.
    sigResult(object): a RunOutcome (with RunRequest.visible: statistics of the visible layers only).
    sigStatsUpdate(object): a StatsUpdate of the last result, worked out after sigResult: first the
        rest of its statistics, then its diagnostics; apply each on the GUI thread.
    sigAnswer(str, int, object): what one request of a lane other than the run's came to (the protocol's `result`
        event): the lane, the run id the request was asked with (0: none), and
          "attribution": an Attribution (a failure comes as sigFailed),
          "catalogue": model sources to offer (torchvision names, timm:NAME),
          "atlas": an OpenedAtlas (opened, or built; a failure comes as sigFailed),
          "pictures": the TopPictures of one channel,
          "graph": a GraphDrawn (the graph recorded and laid out), or a Failure,
          "values": a GraphValues or GraphComparison (the graph's overlay), or a Failure,
          "check": a TrustCard (core.attribution.sanity.card; a failure comes as sigFailed, what "checks").
    sigFailed(object): a Failure.
    sigProgress(int, int): bytes done and total while weights download.
    sigPhase(str): what the worker is doing ("" when idle).
    sigBusy(bool): a request started or finished.
    sigAtlasProgress(int, int): images done and total while an atlas is built.
    """

    _wake = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.hear_on_gui_thread()  # listeners of sigX run on the GUI thread
        self.bench = None  # a core Workbench, made on the worker thread by start_engine()
        self._lock = threading.Lock()
        self._lanes = Lanes(LANES)  # the requests waiting, one per lane, by id
        self._ids = itertools.count(1)
        self._current: str | None = None  # the id of the request in flight
        self._taken: set[str] = set()  # the ids taken from the lanes in this turn, not started yet
        self._stop_current = False  # cancel(id) stopped the request in flight (not Esc): the others go on
        self._unfinished = None  # the last RunOutcome whose statistics were stopped before they were done
        self._atlas_cache: dict = {}  # the OpenedAtlas pictures are read from, by folder
        self._cancel = threading.Event()
        self._drawn = threading.Event()  # the GUI has drawn the last result (or stopped waiting for it)
        self.runs_done = 0
        self._wake.connect(self._on_wake)

    # -- called from the GUI thread ----------------------------------------------------
    def _put(self, lane: str, request) -> str:
        """Wait `request` in `lane` (replacing the one waiting there; a load also the waiting run); its id."""
        key = f"{lane}-{next(self._ids)}"
        self._lanes.put(lane, key, request)
        return key

    def request_load(self, request: ModelRequest, device: str = "cpu") -> str:
        key = self._put("model", (request, device))  # drops the run waiting for the model before
        self._drawn.set()
        self._wake.emit()
        return key

    def request_run(self, request: RunRequest) -> str:
        key = self._put("run", request)
        self._drawn.set()
        self._wake.emit()
        return key

    def result_drawn(self) -> None:
        """The GUI has drawn the last result's panels: the statistics of the rest may start."""
        self._drawn.set()

    def request_attribution(self, request) -> str:
        key = self._put("attribution", request)
        self._wake.emit()
        return key

    def request_atlas(self, request) -> str:
        """Open or build an atlas, or (latest wins) the pictures of one channel's top images."""
        key = self._put("pictures" if request.kind == "pictures" else "atlas", request)
        self._wake.emit()
        return key

    def request_graph(self, request) -> str:
        """Record the graph of the loaded model on an input and lay it out (latest wins)."""
        key = self._put("graph", request)
        self._wake.emit()
        return key

    def request_graph_values(self, request) -> str:
        """Work out a run's values on a recorded graph's nodes (latest wins)."""
        key = self._put("values", request)
        self._wake.emit()
        return key

    def request_finish(self, run_id: int) -> str:
        """Work out the rest of result `run_id`'s statistics, which a run (since cancelled) stopped."""
        key = self._put("finish", run_id)
        self._wake.emit()
        return key

    def request_catalogue(self) -> str:
        key = self._put("catalogue", True)
        self._wake.emit()
        return key

    def pending(self) -> int:
        """How many runs and loads wait (at most one of each)."""
        return int(self._lanes.waiting("run")) + int(self._lanes.waiting("model"))

    def cancel(self, request_id: str | None = None) -> bool:
        """No id (Esc): stop the run or download in flight (within one module) and drop the waiting run.
        An id: drop that request if it waits (in its lane, or taken for this turn and not started), or stop it if
        it is the one in flight (the requests behind it go on); False when it neither waits nor runs (it ran, or
        never came)."""
        if request_id is None:
            self._lanes.drop("run")
            with self._lock:
                self._stop_current = False  # everything in flight stops, not only one request
                self._cancel.set()
            self._drawn.set()
            return True
        with self._lock:
            if self._lanes.cancel(request_id) is not None:
                return True
            if request_id in self._taken:
                self._taken.discard(request_id)
                return True
            if request_id != self._current:
                return False
            if not self._cancel.is_set():  # else Esc stops it already, and what comes after it in this turn
                self._stop_current = True
                self._cancel.set()
        self._drawn.set()
        return True

    # -- runs on the worker thread -----------------------------------------------------
    @Slot()
    def start_engine(self) -> None:
        """Import the engine here, off the GUI thread; the window is already on screen."""
        self._sigPhase.emit("Loading the engine (PyTorch)")
        try:
            from .torch_libraries import preload_torch_libraries

            preload_torch_libraries()  # with the GIL released: the window draws meanwhile
            import numpy.ma  # noqa: F401 - numpy imports it at the first np.percentile: here, not in the first drawing

            # The first run's checked calls import typeguard (0.2 s of Python, every package's entry points read):
            # here, not while the GUI thread lays out the model loaded (the GIL taken in turns: 50-68 ms stalls)
            import typeguard  # noqa: F401

            from inspector.core.sources.devices import available_devices
            from inspector.core.workbench import Workbench

            self.bench = Workbench()
            devices = [(d.name, d.description) for d in available_devices()]
        except Exception as exc:  # noqa: BLE001 - a broken install becomes a message
            self._sigFailed.emit(failure(exc, "engine"))
            return
        finally:
            self._sigPhase.emit("")
        self._sigEngineReady.emit(devices)
        self._on_wake()  # requests that arrived while the engine loaded

    @Slot()
    def _on_wake(self) -> None:
        if self.bench is None:
            return  # start_engine() takes them up
        unfinished = self._unfinished
        with self._lock:  # taken and marked at once: cancel(id) finds each request in its lane or taken
            jobs = self._lanes.take_all()
            lanes = {lane for lane, _key, _request in jobs}
            jobs = [(lane, key, request) for lane, key, request in jobs if lane != "finish" or not (
                unfinished is None or unfinished.run_id != request or lanes & {"run", "model"})]
            # (a `finish` is dropped when that result's statistics are done, or a newer result is coming)
            if not jobs:
                return
            self._stop_current = False
            self._cancel.clear()
            self._taken = {key for _lane, key, _request in jobs}
        self._sigBusy.emit(True)
        try:
            loaded = True
            for lane, key, request in jobs:
                if lane == "run" and not loaded:
                    continue  # it was for the model that failed to load
                with self._lock:
                    if key not in self._taken:
                        continue  # cancelled by its id meanwhile
                    self._taken.discard(key)
                    self._current = key
                try:
                    done = self._serve(lane, request, unfinished)
                finally:
                    self._served()
                if lane == "model":
                    loaded = done
        finally:
            with self._lock:
                self._taken = set()
            self._sigPhase.emit("")
            self._sigBusy.emit(False)

    def _serve(self, lane: str, request, unfinished) -> bool | None:
        """Do one request of `lane`; a load says whether it worked."""
        if lane == "model":
            model, device = request
            return self._load(model, device or "cpu")
        if lane == "catalogue":
            self._catalogue()
        elif lane == "finish":
            self._finish(unfinished)
        else:
            getattr(self, SERVES[lane])(request)
        return None

    def _served(self) -> None:
        """The request in flight is done; one cancel(id) stopped goes no further than itself."""
        with self._lock:
            self._current = None
            if self._stop_current:
                self._stop_current = False
                self._cancel.clear()

    def _progress(self, done: int, total: int) -> None:
        if self._cancel.is_set():
            raise RunCancelled("Download cancelled.")
        self._sigProgress.emit(done, total)

    def _load(self, request: ModelRequest, device: str) -> bool:
        from inspector.core.model_info import describe

        self._sigPhase.emit(f"Loading {request.source}")
        try:
            loaded, tree = self.bench.load(request, progress=self._progress)
            self.bench.move_to(device)
            info = describe(loaded, tree, request)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a message
            self._sigFailed.emit(failure(exc, "load"))
            return False
        self._sigLoaded.emit(info)
        return True

    def _run(self, request: RunRequest) -> None:
        self._sigPhase.emit("Preparing the run")
        failed = None
        try:
            outcome = self.bench.execute(request, self._cancel, progress=self._progress,
                                         phase=lambda name: self._sigPhase.emit(f"Running {name}"))
        except Exception as exc:  # noqa: BLE001
            if not isinstance(exc, InspectorError):
                traceback.print_exc()
            failed = failure(exc, "run", request.run_id)
        if failed is not None:
            self._free_device_memory()  # out of the except block: the failed run's frames, and tensors, are gone
            self._sigFailed.emit(failed)
            return
        self.runs_done += 1
        self._unfinished = None
        self._drawn.clear()
        if outcome.tree is not None:
            from inspector.core.model_info import describe

            self._sigLoaded.emit(describe(self.bench.loaded, outcome.tree, request.model))
        self._sigResult.emit(outcome)
        if not outcome.complete or (outcome.analyse and outcome.analysis is None):
            self._finish(outcome)

    def _finish(self, outcome) -> None:
        """The statistics and diagnostics left out of the run, unless a newer request came meanwhile."""
        newer = _NewerRequest(self)
        self._unfinished = None
        # The panels first: on a machine with few cores the statistics would take the CPU from the
        # drawing. Wait (briefly, and not past a newer request) until the GUI says it has drawn.
        self._drawn.wait(DRAWN_WAIT_S)  # as a server waits for its client's `drawn`
        try:
            self._sigPhase.emit("Statistics of the other layers")
            update = self.bench.finish(outcome, newer, diagnose=False)
            self._sigStatsUpdate.emit(update)
            if update.analysis is None and outcome.analyse and not newer.is_set():
                self._sigPhase.emit("Diagnostics (gradient flow, dead units, first NaN/Inf)")
                self._sigStatsUpdate.emit(self.bench.diagnose(outcome, update))
        except RunCancelled:
            self._unfinished = outcome  # a newer request, or Esc: the app asks again when it still shows it
            return
        except Exception as exc:  # noqa: BLE001
            self._sigFailed.emit(failure(exc, "statistics", outcome.run_id))

    def _attribute(self, request) -> None:
        self._sigPhase.emit(f"Attribution ({request.method})")
        steps = rate_reporter(f"Attribution ({request.method})", "steps", self._sigPhase.emit)
        failed = None
        try:
            found = self.bench.attribute(request, cancel=self._cancel.is_set, progress=steps)
        except Exception as exc:  # noqa: BLE001
            failed = failure(exc, "attribution", request.run_id)
        if failed is not None:
            self._free_device_memory()  # batched copies that ran out of memory: given back to the device
            self._sigFailed.emit(failed)
            return
        self._sigAnswer.emit("attribution", request.run_id, found)

    def _catalogue(self) -> None:
        self._sigPhase.emit("Listing torchvision and timm models")
        try:
            from inspector.core.sources.timm_models import catalogue
            from inspector.core.sources.torchvision_models import torchvision_names

            names = torchvision_names() + catalogue()
        except Exception as exc:  # noqa: BLE001
            self._sigFailed.emit(failure(exc, "engine"))
            return
        self._sigAnswer.emit("catalogue", 0, names)

    @staticmethod
    def _free_device_memory() -> None:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()


class _NewerRequest:
    """Stops `Workbench.finish` when a run or load is waiting, or the user cancelled (an Event's is_set)."""

    def __init__(self, worker: Worker) -> None:
        self.worker = worker

    def is_set(self) -> bool:
        w = self.worker
        return w._cancel.is_set() or w._lanes.waiting("run") or w._lanes.waiting("model")


class WorkerThread(OneThread):
    """One long-lived QThread with its Worker; `stop()` cancels and joins it."""

    def __init__(self, start: bool = True) -> None:
        self.collector = GuiThreadCollector()
        super().__init__(Worker(), "start_engine", "inspector-worker", start)

    def concept_jobs(self):
        """The concept jobs, on this thread beside the worker (the model is used by one thread at a time)."""
        from .concepts import ConceptJobs

        return ConceptJobs(self.worker, self.thread)

    def evaluation_jobs(self):
        """Evaluate…, on this thread beside the worker (the model is used by one thread at a time)."""
        from .evaluation import EvaluationJobs

        return EvaluationJobs(self.worker, self.thread)

    def halt(self) -> None:
        self.worker.cancel()

    def stopped(self) -> None:
        self.collector.stop()
