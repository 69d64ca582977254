"""The app's Evaluate… on the worker's thread (`EvaluationJobs`, moved there, beside the Worker that owns the model):
`run_evaluation` over a folder on the loaded model, with progress; cancelled between images (its state is kept, and
the same request resumes it). It runs between the worker's own jobs, never beside them: the loaded model is used by
one thread at a time. Plain records go back: an EvaluationDone, or a Failure."""

from __future__ import annotations

import itertools
import threading

from PySide6.QtCore import QObject, Signal, Slot

from inspector.core.records.evaluation import EvaluationDone, EvaluationRequest
from inspector.core.records.failure import failure
from inspector.protocol.lanes import Lanes

from ..common.gui_thread_signals import HeardOnGuiThread
from ..common.progress_rate import rate_reporter

#: How the evaluation's progress begins ("Evaluation: 3 of 40 images (1.2/s, 31 s left; Esc cancels)").
STAGE = "Evaluation"

__all__ = ["STAGE", "EvaluationDone", "EvaluationJobs", "EvaluationRequest"]


class EvaluationJobs(HeardOnGuiThread, QObject):
    """Lives on the worker's thread (`thread`); `worker` is the Worker there (its `bench` holds the model). One
    evaluation waits at a time (latest wins); it runs alone and is stopped by `cancel()`, or by the worker's own
    cancel (Esc, the app closing) said after it started.

    Signals
    -------
    sigAnswer(int, object): the run id the request was asked with, and an EvaluationDone, or a Failure (what
        "evaluation"; cancelled: the job stopped, and the same request resumes it).
    sigProgress(int, int): images done and in all.
    """

    _sigAnswer = Signal(int, object)
    _sigProgress = Signal(int, int)
    _wake = Signal()

    def __init__(self, worker, thread) -> None:
        super().__init__()
        self.hear_on_gui_thread()  # before moveToThread: the face stays on the GUI thread
        self.worker = worker
        self._lanes = Lanes(("run",), also_drops={})
        self._ids = itertools.count(1)
        self._cancel = threading.Event()
        self.moveToThread(thread)
        self._wake.connect(self._on_wake)

    # -- called from the GUI thread ----------------------------------------------------------
    def request(self, request: EvaluationRequest) -> str:
        """Evaluate as `request` says (replacing one still waiting); its id."""
        self._cancel.clear()
        key = f"evaluation-{next(self._ids)}"
        self._lanes.put("run", key, request)
        self._wake.emit()
        return key

    def cancel(self) -> None:
        """Stop the evaluation after its image (its state is kept: the same request resumes it)."""
        self._cancel.set()

    # -- on the worker's thread ----------------------------------------------------------------
    @Slot()
    def _on_wake(self) -> None:
        jobs = self._lanes.take_all()
        if not jobs or getattr(self.worker, "bench", None) is None:
            return
        self.worker._sigBusy.emit(True)  # Esc is enabled while it runs
        try:
            for _lane, _key, request in jobs:
                self._run(request)
        finally:
            self.worker._sigPhase.emit("")
            self.worker._sigBusy.emit(False)

    def _stopped(self):
        """This job's cancel, or the worker's said after the job started (Esc; the app closing): an Esc that
        stopped something before does not stop this."""
        said = self.worker._cancel
        before = said.is_set()
        return lambda: self._cancel.is_set() or (not before and said.is_set())

    def _run(self, request: EvaluationRequest) -> None:
        from inspector.core.evaluate import run_evaluation

        bench = self.worker.bench
        self.worker._sigPhase.emit(f"{STAGE}: starting")
        try:
            loaded, _tree = bench.load(request.model)
            progress = rate_reporter(STAGE, "images", self.worker._sigPhase.emit, self._sigProgress.emit,
                                     from_first_report=True)
            try:
                summary = run_evaluation(loaded, request.data_dir, list(request.methods), list(request.metrics),
                                         request.out_dir, protocol=request.protocol, steps=request.steps,
                                         batch=request.batch, device=request.device, progress=progress,
                                         cancel=self._stopped())
            finally:
                bench.move_to(request.device)  # the model stays where the app runs it
        except Exception as exc:  # noqa: BLE001 - RunCancelled and every failure become a message
            self._sigAnswer.emit(request.run_id, failure(exc, "evaluation", request.run_id))
            return
        self._sigAnswer.emit(request.run_id, EvaluationDone(request.out_dir, summary))
