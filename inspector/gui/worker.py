"""The worker thread: owns the loaded model on its device; runs requests, latest wins.

The GUI thread sends immutable requests. A newer request replaces one still waiting,
so live toggling never builds a backlog. Results carry the request's run id; the state
drops stale ones. Errors come back as `Failure` records, never as exceptions in the
event loop. Only plain records cross the thread: a `ModelInfo`, never the module.

The engine (torch) is imported on this thread when it starts, so the window is on
screen before it has loaded.
"""

from __future__ import annotations

import threading
import traceback

from PySide6.QtCore import QObject, QThread, Signal, Slot

from inspector.core.errors import InspectorError, RunCancelled
from inspector.core.records.failure import failure
from inspector.core.records.requests import ModelRequest, RunRequest

from .gc_collector import GuiThreadCollector
from .gui_thread_signals import HeardOnGuiThread
from .progress_rate import rate_reporter
from .worker_atlas import AtlasJobs
from .worker_graph import GraphJobs
from .worker_graph_values import GraphValuesJobs

#: How long the worker waits for the GUI to draw a result before it works out the other statistics.
DRAW_WAIT_S = 0.5


class Worker(HeardOnGuiThread, AtlasJobs, GraphJobs, GraphValuesJobs, QObject):
    """Signals
    -------
    sigEngineReady(object): the devices this machine has, [(name, description)], once torch is imported.
    sigLoaded(object): a ModelInfo after a model (re)load.
    sigResult(object): a RunOutcome (with RunRequest.visible: statistics of the visible layers only).
    sigStatsUpdate(object): a StatsUpdate of the last result, worked out after sigResult: first the
        rest of its statistics, then its diagnostics; apply each on the GUI thread.
    sigAttribution(int, object): request id and an Attribution.
    sigCatalogue(object): model sources to offer (torchvision names, timm:NAME), when asked for.
    sigFailed(object): a Failure.
    sigProgress(int, int): bytes done and total while weights download.
    sigPhase(str): what the worker is doing ("" when idle).
    sigBusy(bool): a request started or finished.
    sigAtlas(object): an OpenedAtlas (opened, or built).
    sigAtlasPictures(int, object): request id and the TopPictures of one channel.
    sigAtlasProgress(int, int): images done and total while an atlas is built.
    sigGraph(int, object): request id and a GraphDrawn (the graph recorded and laid out), or a Failure.
    sigGraphValues(int, object): request id and a GraphValues or GraphComparison (the graph's overlay), or a Failure.
    """

    _sigEngineReady = Signal(object)
    _sigLoaded = Signal(object)
    _sigResult = Signal(object)
    _sigStatsUpdate = Signal(object)
    _sigAttribution = Signal(int, object)
    _sigCatalogue = Signal(object)
    _sigFailed = Signal(object)
    _sigProgress = Signal(int, int)
    _sigPhase = Signal(str)
    _sigBusy = Signal(bool)
    _sigAtlas = Signal(object)
    _sigAtlasPictures = Signal(int, object)
    _sigAtlasProgress = Signal(int, int)
    _sigGraph = Signal(int, object)
    _sigGraphValues = Signal(int, object)
    _wake = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.hear_on_gui_thread()  # listeners of sigX run on the GUI thread
        self.bench = None  # a core Workbench, made on the worker thread by start_engine()
        self._lock = threading.Lock()
        self._pending_load: ModelRequest | None = None
        self._pending_run: RunRequest | None = None
        self._pending_device: str | None = None
        self._pending_attribution = None
        self._pending_catalogue = False
        self._pending_atlas = None  # open or build
        self._pending_pictures = None
        self._pending_finish: int | None = None  # run id of a result whose statistics to finish
        self._pending_graph = None  # a GraphRequest: record and lay out the graph
        self._pending_values = None  # a GraphValuesRequest: the values on the graph's nodes
        self._unfinished = None  # the last RunOutcome whose statistics were stopped before they were done
        self._atlas_cache: dict = {}  # the OpenedAtlas pictures are read from, by folder
        self._cancel = threading.Event()
        self._drawn = threading.Event()  # the GUI has drawn the last result (or stopped waiting for it)
        self.runs_done = 0
        self._wake.connect(self._on_wake)

    # -- called from the GUI thread ----------------------------------------------------
    def request_load(self, request: ModelRequest, device: str = "cpu") -> None:
        with self._lock:
            self._pending_load, self._pending_run, self._pending_device = request, None, device
        self._drawn.set()
        self._wake.emit()

    def request_run(self, request: RunRequest) -> None:
        with self._lock:
            self._pending_run = request
        self._drawn.set()
        self._wake.emit()

    def result_drawn(self) -> None:
        """The GUI has drawn the last result's panels: the statistics of the rest may start."""
        self._drawn.set()

    def request_attribution(self, request) -> None:
        with self._lock:
            self._pending_attribution = request
        self._wake.emit()

    def request_atlas(self, request) -> None:
        """Open or build an atlas, or (latest wins) the pictures of one channel's top images."""
        with self._lock:
            if request.kind == "pictures":
                self._pending_pictures = request
            else:
                self._pending_atlas = request
        self._wake.emit()

    def request_graph(self, request) -> None:
        """Record the graph of the loaded model on an input and lay it out (latest wins)."""
        with self._lock:
            self._pending_graph = request
        self._wake.emit()

    def request_graph_values(self, request) -> None:
        """Work out a run's values on a recorded graph's nodes (latest wins)."""
        with self._lock:
            self._pending_values = request
        self._wake.emit()

    def request_finish(self, run_id: int) -> None:
        """Work out the rest of result `run_id`'s statistics, which a run (since cancelled) stopped."""
        with self._lock:
            self._pending_finish = run_id
        self._wake.emit()

    def request_catalogue(self) -> None:
        with self._lock:
            self._pending_catalogue = True
        self._wake.emit()

    def pending(self) -> int:
        with self._lock:
            return int(self._pending_run is not None) + int(self._pending_load is not None)

    def cancel(self) -> None:
        """Stop the run or download in flight (within one module) and drop any waiting request."""
        with self._lock:
            self._pending_run = None
        self._cancel.set()
        self._drawn.set()

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

            from inspector.core.devices import available_devices
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
        with self._lock:
            load, run, device = self._pending_load, self._pending_run, self._pending_device
            attribution, catalogue = self._pending_attribution, self._pending_catalogue
            atlas, pictures, finish = self._pending_atlas, self._pending_pictures, self._pending_finish
            self._pending_load = self._pending_run = self._pending_attribution = None
            self._pending_atlas = self._pending_pictures = self._pending_finish = None
            self._pending_catalogue = False
            graph, self._pending_graph = self._pending_graph, None
            values, self._pending_values = self._pending_values, None
        unfinished = self._unfinished
        if finish is not None and (unfinished is None or unfinished.run_id != finish or run is not None
                                   or load is not None):
            finish = None  # that result's statistics are done, or a newer result is coming
        if load is None and run is None and attribution is None and not catalogue and not (atlas or pictures) \
                and finish is None and graph is None and values is None:
            return
        self._cancel.clear()
        self._sigBusy.emit(True)
        try:
            if catalogue:
                self._catalogue()
            if load is not None and not self._load(load, device or "cpu"):
                run = None  # it was for the model that failed to load
            if run is not None:
                self._run(run)
            if finish is not None:
                self._finish(unfinished)
            if attribution is not None:
                self._attribute(attribution)
            for job in (atlas, pictures):
                if job is not None:
                    self._run_atlas(job)
            if graph is not None:
                self._record_graph(graph)
            if values is not None:
                self._graph_values(values)
        finally:
            self._sigPhase.emit("")
            self._sigBusy.emit(False)

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
        self._drawn.wait(DRAW_WAIT_S)
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
        self._sigAttribution.emit(request.run_id, found)

    def _catalogue(self) -> None:
        self._sigPhase.emit("Listing torchvision and timm models")
        try:
            from inspector.core.sources.timm_models import catalogue
            from inspector.core.sources.torchvision_models import torchvision_names

            names = torchvision_names() + catalogue()
        except Exception as exc:  # noqa: BLE001
            self._sigFailed.emit(failure(exc, "engine"))
            return
        self._sigCatalogue.emit(names)

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
        return w._cancel.is_set() or w._pending_run is not None or w._pending_load is not None


class WorkerThread:
    """One long-lived QThread with its Worker; `stop()` cancels and joins it."""

    def __init__(self, start: bool = True) -> None:
        self.collector = GuiThreadCollector()
        self.thread = QThread()
        self.thread.setObjectName("inspector-worker")
        self.worker = Worker()
        self.worker.moveToThread(self.thread)
        self.thread.started.connect(self.worker.start_engine)
        self._started = False
        if start:
            self.start()

    def start(self) -> None:
        """Start the thread (the engine loads on it); a second call, or one after stop(), does nothing."""
        if not self._started:
            self._started = True
            self.thread.start()

    def stop(self, timeout_ms: int = 30000) -> bool:
        self._started = True  # never (re)started after this
        if not self.thread.isRunning():
            self.collector.stop()
            return True
        self.worker.cancel()
        self.thread.quit()
        stopped = self.thread.wait(timeout_ms)
        if stopped:
            self.collector.stop()
        return stopped
