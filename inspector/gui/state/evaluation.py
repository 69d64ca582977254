"""The Evaluate… job the Evaluation window shows (`EvaluationState`): attribution methods evaluated over a folder of
images on the loaded model (`inspector.core.evaluate`, as `network-inspector evaluate` runs it), in the worker
(`worker.evaluation.EvaluationJobs`), with progress; Esc or the window's Cancel stops it after an image, and running
it again with the same choices resumes there. A finished evaluation (run here, or a folder written by the command)
is opened from its summary.json, here on the GUI thread (a small JSON file, no torch).

A failure leaves what was shown: the summary on screen stays, and so do the files of the folder it came from. On a
remote engine the job runs there (`worker.remote_trust`), over a folder of its data root into a folder there, with
the same progress, cancel and summary; Open… chooses a folder there, and its summary comes back from there.
"""

from __future__ import annotations

from itertools import count
from pathlib import Path

from PySide6.QtCore import Signal

from inspector.core.records.failure import Failure, failure

from ..worker.evaluation import STAGE, EvaluationDone, EvaluationRequest
from .folder_job import FolderJobState


class EvaluationState(FolderJobState):
    """Signals (and FolderJobState's: sigBuilding, sigProgress of images done and in all, sigBuildText)
    -------
    sigSummary(object): the EvaluationDone shown (run here, or opened).
    sigSaid(str, bool): one line for the Evaluation window (True: an error); "" takes it down.
    """

    sigSummary = Signal(object)
    sigSaid = Signal(str, bool)

    def __init__(self, app) -> None:
        jobs = app.worker_thread.evaluation_jobs()  # on the worker's thread, or the remote engine's
        super().__init__(app, f"{STAGE}: ", jobs.sigProgress, app.worker.sigPhase)
        self.jobs = jobs
        self.shown: EvaluationDone | None = None  # the summary on screen
        self.asked: EvaluationRequest | None = None  # the last evaluation asked for (resumed with the same)
        self._ids = count(1)
        self._run_id = 0
        self._opening: str | None = None  # a server's folder whose summary was asked for (a remote engine)
        jobs.sigAnswer.connect(self._on_answer)
        app.worker.sigAnswer.connect(self._on_summary)

    def run(self, data_dir: str, out_dir: str, methods, metrics, protocol: str, steps: int | None,
            batch: int = 4) -> bool:
        """Evaluate `methods`' maps by `metrics` over the images in `data_dir` on the loaded model, into `out_dir`
        (a job cancelled there before, with the same choices, goes on where it stopped)."""
        app = self.app
        why = self.why_not()
        if why:
            self.refuse(why)
            return False
        if self.building:
            return False
        self._run_id = next(self._ids)
        request = EvaluationRequest(app.model.request, str(data_dir), str(out_dir), tuple(methods), tuple(metrics),
                                    protocol, steps, int(batch), app.usable_device(), self._run_id)
        self.asked = request
        self.sigSaid.emit(f"Evaluating {', '.join(request.methods)} by {', '.join(request.metrics)} over "
                          f"{data_dir} …", False)
        self._begin_build(lambda: self.jobs.request(request))
        return True

    def why_not(self) -> str:
        """Why no evaluation can run now, in one line ("": it can)."""
        if self.app.model is None:
            return "Load a model first: the evaluation runs on the loaded model."
        return ""

    def open(self, out_dir: str) -> bool:
        """Show the finished evaluation in `out_dir` (its summary.json); one line when there is none. On a remote
        engine the folder is the server's: its summary comes back from there (sigSummary, or the line), and True
        says it was asked for."""
        from inspector.core.evaluate.store import open_summary

        if self.app.engine_url is not None:
            self._opening = str(out_dir)
            self.app.worker.request_summary(self._opening)
            return True
        try:
            summary = open_summary(out_dir)
        except Exception as exc:  # noqa: BLE001 - a damaged file is one line
            self.refuse(failure(exc, "evaluation").message)
            return False
        self._show(EvaluationDone(str(Path(out_dir)), summary))
        return True

    def _on_summary(self, lane: str, _id: int, found) -> None:
        """The summary of the server's folder asked for by `open` on a remote engine, or why there is none."""
        if lane != "evaluation-summary" or self._opening is None:
            return
        out, self._opening = self._opening, None
        if isinstance(found, Failure):
            self.refuse(found.message)
        else:
            self._show(EvaluationDone(out, found))

    def refuse(self, line: str) -> None:
        self.sigSaid.emit(line, True)
        self.app.notify("error", line)

    def _stop_build(self) -> None:
        self.jobs.cancel()

    def _on_answer(self, run_id: int, found) -> None:
        if run_id != self._run_id:
            return
        if isinstance(found, Failure):
            self._on_failed(found)
            return
        self._end_build("done")
        summary = found.summary
        skipped = f", {len(summary['skipped'])} skipped" if summary.get("skipped") else ""
        self.app.notify("info", f"Evaluated {len(summary['methods'])} methods over {summary['images']} images"
                                f"{skipped}: see the Evaluation window ({Path(found.out_dir).name}).")
        self._show(found)

    def _on_failed(self, failed: Failure) -> None:
        self._end_said(failed, "Evaluate again with the same choices to go on where it stopped.", "Not evaluated",
                       "Not evaluated")

    def _show(self, done: EvaluationDone) -> None:
        self.shown = done
        self.sigSaid.emit("", False)
        self.sigSummary.emit(done)
