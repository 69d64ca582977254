"""The worker thread: owns the loaded model on its device; runs requests, latest wins.

The GUI thread sends immutable requests. A newer request replaces one still waiting,
so live toggling never builds a backlog. Results carry the request's run id; the window
drops stale ones. Errors come back as messages, never as exceptions in the event loop.
"""

from __future__ import annotations

import gc
import threading
import traceback

from PySide6.QtCore import QObject, QThread, QTimer, Signal, Slot

from inspector.core.errors import InspectorError, RunCancelled
from inspector.core.workbench import ModelRequest, RunRequest, Workbench


def describe_error(exc: BaseException) -> str:
    if isinstance(exc, InspectorError):
        return str(exc)
    name = type(exc).__name__
    if "OutOfMemory" in name or "out of memory" in str(exc).lower():
        return ("The device ran out of memory. Tick fewer layers, use a smaller input, "
                "or switch to the CPU. The model is still loaded.")
    return f"Unexpected {name}: {exc}"


class Worker(QObject):
    """Signals
    -------
    sigLoaded(object, object): (LoadedModel, LayerTree) after a model (re)load.
    sigResult(object): a RunOutcome.
    sigAttribution(int, object): request id and an Attribution.
    sigFailed(int, str, bool): run id (0 for a load), message, whether it was a cancel.
    sigProgress(int, int): bytes done and total while weights download.
    sigBusy(bool): a request started or finished.
    """

    sigLoaded = Signal(object, object)
    sigResult = Signal(object)
    sigAttribution = Signal(int, object)
    sigFailed = Signal(int, str, bool)
    sigProgress = Signal(int, int)
    sigBusy = Signal(bool)
    _sigWake = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.bench = Workbench()
        self._lock = threading.Lock()
        self._pending_load: ModelRequest | None = None
        self._pending_run: RunRequest | None = None
        self._pending_device: str | None = None
        self._pending_attribution = None
        self._cancel = threading.Event()
        self.runs_done = 0
        self._sigWake.connect(self._on_wake)

    # -- called from the GUI thread ----------------------------------------------------
    def request_load(self, request: ModelRequest, device: str = "cpu") -> None:
        with self._lock:
            self._pending_load, self._pending_run, self._pending_device = request, None, device
        self._sigWake.emit()

    def request_run(self, request: RunRequest) -> None:
        with self._lock:
            self._pending_run = request
        self._sigWake.emit()

    def request_attribution(self, request) -> None:
        with self._lock:
            self._pending_attribution = request
        self._sigWake.emit()

    def pending(self) -> int:
        with self._lock:
            return int(self._pending_run is not None) + int(self._pending_load is not None)

    def cancel(self) -> None:
        """Stop the run in flight (within one module) and drop any waiting request."""
        with self._lock:
            self._pending_run = None
        self._cancel.set()

    # -- runs on the worker thread -----------------------------------------------------
    @Slot()
    def _on_wake(self) -> None:
        with self._lock:
            load, run, device = self._pending_load, self._pending_run, self._pending_device
            attribution = self._pending_attribution
            self._pending_load = self._pending_run = self._pending_attribution = None
        if load is None and run is None and attribution is None:
            return
        self._cancel.clear()
        self.sigBusy.emit(True)
        try:
            if load is not None:
                self._load(load, device or "cpu")
            if run is not None:
                self._run(run)
            if attribution is not None:
                self._attribute(attribution)
        finally:
            self.sigBusy.emit(False)

    def _load(self, request: ModelRequest, device: str) -> None:
        try:
            loaded, tree = self.bench.load(request, progress=self.sigProgress.emit)
            self.bench.move_to(device)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a message
            self.sigFailed.emit(0, describe_error(exc), False)
            return
        self.sigLoaded.emit(loaded, tree)

    def _run(self, request: RunRequest) -> None:
        try:
            outcome = self.bench.execute(request, self._cancel, progress=self.sigProgress.emit)
        except RunCancelled:
            self.sigFailed.emit(request.run_id, "Run cancelled.", True)
            return
        except Exception as exc:  # noqa: BLE001
            if not isinstance(exc, InspectorError):
                traceback.print_exc()
            self._free_device_memory()
            self.sigFailed.emit(request.run_id, describe_error(exc), False)
            return
        self.runs_done += 1
        if outcome.tree is not None:
            self.sigLoaded.emit(self.bench.loaded, outcome.tree)
        self.sigResult.emit(outcome)

    def _attribute(self, request) -> None:
        try:
            found = self.bench.attribute(request)
        except Exception as exc:  # noqa: BLE001
            self.sigFailed.emit(request.run_id, describe_error(exc), False)
            return
        self.sigAttribution.emit(request.run_id, found)

    @staticmethod
    def _free_device_memory() -> None:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()


class GuiThreadCollector:
    """Python's cyclic garbage collection, run only on the GUI thread while workers exist.

    Automatic collection runs in whichever thread happens to allocate. On the worker (or an
    autograd thread running a hook) it can free garbage that holds Qt widgets, such as
    pyqtgraph's parentless menus, destroying them off the GUI thread; that deadlocked
    against Shiboken's main-thread deletions. So automatic collection is off and a GUI
    timer collects with the usual thresholds. Create and stop on the GUI thread.
    """

    _running = 0
    _was_enabled = True

    def __init__(self, interval_ms: int = 250) -> None:
        self.timer = QTimer(interval=interval_ms)
        self.timer.timeout.connect(self.collect)
        cls = GuiThreadCollector
        if cls._running == 0:
            cls._was_enabled = gc.isenabled()
            gc.disable()
        cls._running += 1
        self.timer.start()

    @staticmethod
    def collect() -> None:
        (t0, t1, t2), (c0, c1, c2) = gc.get_threshold(), gc.get_count()
        if t0 and c0 > t0:
            gc.collect(2 if c2 > t2 else 1 if c1 > t1 else 0)

    def stop(self) -> None:
        if not self.timer.isActive():
            return
        self.timer.stop()
        cls = GuiThreadCollector
        cls._running -= 1
        if cls._running == 0 and cls._was_enabled:
            gc.enable()


class WorkerThread:
    """One long-lived QThread with its Worker; `stop()` cancels and joins it."""

    def __init__(self, start: bool = True) -> None:
        self.collector = GuiThreadCollector()
        self.thread = QThread()
        self.thread.setObjectName("inspector-worker")
        self.worker = Worker()
        self.worker.moveToThread(self.thread)
        if start:
            self.start()

    def start(self) -> None:
        self.thread.start()

    def stop(self, timeout_ms: int = 30000) -> bool:
        if not self.thread.isRunning():
            self.collector.stop()
            return True
        self.worker.cancel()
        self.thread.quit()
        stopped = self.thread.wait(timeout_ms)
        if stopped:
            self.collector.stop()
        return stopped
