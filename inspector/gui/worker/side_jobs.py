"""Jobs beside the Worker on its thread (`SideJobs`: the concepts' and the evaluation's): each kind of request waits
in its lane (latest wins), is taken when the thread is free, and runs between the worker's own jobs, never beside
them (the loaded model is used by one thread at a time), the worker saying it is busy meanwhile."""

from __future__ import annotations

import itertools
import threading

from PySide6.QtCore import QObject, Signal, Slot

from inspector.protocol.lanes import Lanes

from ..common.gui_thread_signals import HeardOnGuiThread


class SideJobs(HeardOnGuiThread, QObject):
    """Moved to the worker's `thread` (its face stays on the GUI thread); `worker` is the Worker there (its `bench`
    holds the model). A subclass declares its signals and does each job in `_do(lane, request)`; `_cancel` is
    the event its long jobs stop at."""

    _wake = Signal()

    def __init__(self, worker, thread, lanes: tuple[str, ...]) -> None:
        super().__init__()
        self.hear_on_gui_thread()  # before moveToThread: the face stays on the GUI thread
        self.worker = worker
        self._lanes = Lanes(lanes, also_drops={})  # the requests waiting, one per lane, by id
        self._ids = itertools.count(1)
        self._cancel = threading.Event()
        self.moveToThread(thread)
        self._wake.connect(self._on_wake)

    # -- called from the GUI thread ----------------------------------------------------------
    def _put(self, lane: str, prefix: str, request) -> str:
        """`request` waits in `lane` (replacing the one waiting there); its id."""
        key = f"{prefix}-{next(self._ids)}"
        self._lanes.put(lane, key, request)
        self._wake.emit()
        return key

    def cancel(self) -> None:
        """Stop a long job after its batch or image (its state is kept: asking again resumes it)."""
        self._cancel.set()

    # -- on the worker's thread ----------------------------------------------------------------
    @Slot()
    def _on_wake(self) -> None:
        jobs = self._lanes.take_all()
        if not jobs or getattr(self.worker, "bench", None) is None:
            return
        self.worker._sigBusy.emit(True)  # Esc is enabled while they run
        try:
            for lane, _key, request in jobs:
                self._do(lane, request)
        finally:
            self.worker._sigPhase.emit("")
            self.worker._sigBusy.emit(False)

    def _do(self, lane: str, request) -> None:
        raise NotImplementedError


class RemoteJobFace:
    """A side job's face as the window's state holds it (`request(record) -> id`, `cancel()`, `sigAnswer`,
    `sigProgress`, as a `SideJobs` has them in process) on a remote engine: the RemoteWorker's request and cancel, and
    its signals, heard on the GUI thread."""

    def __init__(self, answer, progress, request, cancel) -> None:
        self.sigAnswer, self.sigProgress = answer, progress
        self.request, self.cancel = request, cancel
