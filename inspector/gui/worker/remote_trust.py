"""Check these maps and Evaluate… on a remote engine: the part of `RemoteWorker` that asks for them and turns their
answers into what the in-process worker says, so the same signals reach the state:

    check     (a map's trust card, a TrustRequest, served as `checks`) progress (its phase in words) -> sigPhase
              ("Checking the maps (gradcam): MPRT step 3 of 9 (on the engine; Esc cancels)"); result ->
              sigAnswer("check", run id, TrustCard), the randomisation strip's maps with it; failed or cancelled ->
              sigFailed(a Failure, what "checks"), as in process
    evaluate  (Evaluate… over a folder in the server's data root, an EvaluationRequest, served in the server's job
              lane beside an atlas or concepts build) progress (images) -> sigPhase ("Evaluation: 3 of 40 images
              (…; Esc cancels)") and sigEvaluationProgress; result -> sigEvaluationAnswer(run id, EvaluationDone);
              failed or cancelled -> sigEvaluationAnswer(run id, Failure what "evaluation"): a cancelled one keeps its
              state on the engine, and the same request resumes it

`RemoteEvaluationJobs` is the evaluation's face (`worker.evaluation.EvaluationJobs`: request, cancel, sigAnswer,
sigProgress) on a remote engine.
"""

from __future__ import annotations

from inspector.core.records.failure import Failure

from ..common.progress_rate import rate_reporter
from .evaluation import STAGE
from .side_jobs import RemoteJobFace

#: The evaluation's lane, after the worker's and the concept jobs'.
EVALUATION_LANE = "evaluate"


class RemoteTrust:
    """Mixed into RemoteWorker (which has `_put`, `_lanes`, `_lock`, `_flights`, `_cancels`, `_wake` and the signals
    `_sigPhase`, `_sigEvaluationAnswer`, `_sigEvaluationProgress`)."""

    def request_check(self, request) -> str:
        """A map's trust card (a TrustRequest; its `maps`, the strip's, asked for with it as the state asks) in the
        worker's "check" lane (latest wins); its answer is sigAnswer("check", run id, TrustCard)."""
        return self._put("check", request)

    def request_evaluation(self, request) -> str:
        """Evaluate… (an EvaluationRequest), in its lane (latest wins); its answer is sigEvaluationAnswer."""
        return self._put(EVALUATION_LANE, request)

    def cancel_evaluation(self) -> None:
        """Stop an evaluation: one waiting is dropped (answered cancelled), one on the engine is stopped after its
        image (its state is kept there: evaluating again with the same choices resumes)."""
        dropped = self._lanes.drop(EVALUATION_LANE)
        if dropped is not None:
            self._evaluation_answer(dropped[1], Failure("Cancelled.", "evaluation", "RunCancelled",
                                                        dropped[1].run_id, True))
            return
        with self._lock:
            self._cancels.extend(f.key for f in self._flights.values() if f.lane == EVALUATION_LANE)
        self._wake.set()

    def _evaluation_answer(self, request, answer) -> None:
        """What an evaluation came to: its EvaluationDone, or a Failure (what "evaluation")."""
        self._sigEvaluationAnswer.emit(request.run_id, answer)

    def _on_trust_progress(self, flight, body) -> None:
        """A card's phase (its words, the progress's stage), or an evaluation's images done and in all."""
        if flight.lane == "check":
            if body.get("stage"):
                self._sigPhase.emit(f"Checking the maps ({flight.request.method}): {body['stage']} (on the engine; "
                                    f"Esc cancels)")
            return
        done, total = int(body.get("done", 0)), int(body.get("total", 0))
        if total:
            if flight.progress is None:  # the rate counts from the first report (a resumed job: what it did now)
                flight.progress = rate_reporter(STAGE, "images", self._sigPhase.emit,
                                                self._sigEvaluationProgress.emit, from_first_report=True)
            flight.progress(done, total)


class RemoteEvaluationJobs(RemoteJobFace):
    """The evaluation's face (`worker.evaluation.EvaluationJobs`) on a remote engine; `cancel` stops it after its
    image (its state is kept on the engine: evaluating again resumes)."""

    def __init__(self, worker) -> None:
        super().__init__(worker.sigEvaluationAnswer, worker.sigEvaluationProgress, worker.request_evaluation,
                         worker.cancel_evaluation)
