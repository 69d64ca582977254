"""The app's Evaluate… on the worker's thread (`EvaluationJobs`, moved there, beside the Worker that owns the model):
`run_evaluation` over a folder on the loaded model, with progress; cancelled between images (its state is kept, and
the same request resumes it). It runs between the worker's own jobs, never beside them: the loaded model is used by
one thread at a time. Plain records go back: an EvaluationDone, or a Failure."""

from __future__ import annotations

from PySide6.QtCore import Signal

from inspector.core.records.evaluation import EvaluationDone, EvaluationRequest
from inspector.core.records.failure import failure

from ..common.progress_rate import rate_reporter
from .side_jobs import SideJobs

#: How the evaluation's progress begins ("Evaluation: 3 of 40 images (1.2/s, 31 s left; Esc cancels)").
STAGE = "Evaluation"

__all__ = ["STAGE", "EvaluationDone", "EvaluationJobs", "EvaluationRequest"]


class EvaluationJobs(SideJobs):
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

    def __init__(self, worker, thread) -> None:
        super().__init__(worker, thread, ("run",))

    # -- called from the GUI thread ----------------------------------------------------------
    def request(self, request: EvaluationRequest) -> str:
        """Evaluate as `request` says (replacing one still waiting); its id."""
        self._cancel.clear()
        return self._put("run", "evaluation", request)

    # -- on the worker's thread ----------------------------------------------------------------
    def _do(self, _lane: str, request: EvaluationRequest) -> None:
        self._run(request)

    def _stopped(self):
        """This job's cancel, or the worker's said after the job started (Esc; the app closing): an Esc that
        stopped something before does not stop this."""
        said = self.worker._cancel
        before = said.is_set()
        return lambda: self._cancel.is_set() or (not before and said.is_set())

    def _run(self, request: EvaluationRequest) -> None:
        from inspector.core.evaluate.served import evaluate_on

        self.worker._sigPhase.emit(f"{STAGE}: starting")
        try:
            progress = rate_reporter(STAGE, "images", self.worker._sigPhase.emit, self._sigProgress.emit,
                                     from_first_report=True)
            done = evaluate_on(self.worker.bench, request, progress, self._stopped())  # (the model stays on its device)
        except Exception as exc:  # noqa: BLE001 - RunCancelled and every failure become a message
            self._sigAnswer.emit(request.run_id, failure(exc, "evaluation", request.run_id))
            return
        self._sigAnswer.emit(request.run_id, done)
