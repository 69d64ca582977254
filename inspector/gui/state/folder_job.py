"""The build of a folder job (a channel atlas, a concept dictionary) as the app holds it: one state part for both.

A build is asked for and waits behind what the worker does (it runs one thing at a time: "queued"), runs (its own
phases begin with the job's `stages`, e.g. "Atlas: " or "Concepts: ", and its progress comes), and ends: "done",
"cancelled" (building again with the same choices resumes) or "failed". `FolderJobState` is the base of
`AtlasState` and `ConceptsState`: where the build stands (`building`, `build_phase`) and its three signals; each
job says its own words of the ending (the atlas in the banner, the concepts in their view too).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

#: Where a build stands, in the order a build goes through them.
PHASES = ("idle", "queued", "running", "done", "cancelled", "failed")


def queued_text(phase: str) -> str:
    """Until the build's first own phase: what the worker does before it ("": nothing, the build is starting)."""
    return f"Queued behind “{phase}”: the build starts when that ends." if phase else "Starting…"


class FolderJobState(QObject):
    """Signals
    -------
    sigBuilding(bool): a build started or ended.
    sigProgress(int, int): done and total of the build's stage (the atlas: images).
    sigBuildText(str): the build's progress in words: what it waits behind, then its own phases (rate, time left).
    """

    sigBuilding = Signal(bool)
    sigProgress = Signal(int, int)
    sigBuildText = Signal(str)

    def __init__(self, app, stages: str, progress, phase) -> None:
        """`stages`: how the job's own phases begin; `progress(done, total)` and `phase(str)`: the signals the
        worker says them with."""
        super().__init__(app)
        self.app = app
        self.stages = stages
        self.building = False
        self.build_phase = "idle"  # one of PHASES
        progress.connect(self._on_build_progress)
        phase.connect(self._on_build_phase)

    def _begin_build(self, send) -> None:
        """A build asked for: said at once, `send()` hands it to the worker, and until its first own phase the
        text says what it waits behind."""
        self.building, self.build_phase = True, "queued"
        self.sigBuilding.emit(True)
        send()
        self.sigBuildText.emit(queued_text(self.app.phase))

    def cancel(self) -> None:
        """Stop a build after its batch (Esc, or the view's Cancel); building again resumes."""
        if self.building:
            self._stop_build()

    def _stop_build(self) -> None:
        """Ask the worker to stop the build (the job's own way)."""
        raise NotImplementedError

    def _on_build_phase(self, phase: str) -> None:
        if not self.building:
            return
        if phase.startswith(self.stages):
            self.build_phase = "running"
            self.sigBuildText.emit(phase)
        elif self.build_phase == "queued":  # (a phase of another job the build waits for)
            self.sigBuildText.emit(queued_text(phase))

    def _on_build_progress(self, done: int, total: int) -> None:
        if self.building:
            self.build_phase = "running"
        self.sigProgress.emit(done, total)

    def _end_build(self, how: str) -> bool:
        """The build ended `how` ("done", "cancelled" or "failed"); False when none was building."""
        if not self.building:
            return False
        self.building, self.build_phase = False, how
        self.sigBuilding.emit(False)
        return True

    def _end_said(self, failed, again: str, not_done: str, banner: str) -> None:
        """The build ended in `failed` (a Failure), said in the job's view (its sigSaid) and the banner: cancelled,
        with `again` (how to go on where it stopped); else failed, "`not_done`: why" ("`banner`: why" above)."""
        self._end_build("cancelled" if failed.cancelled else "failed")
        if failed.cancelled:
            line = f"{failed.message} {again}"
            self.sigSaid.emit(line, False)
            self.app.notify("info", line)
        else:
            self.sigSaid.emit(f"{not_done}: {failed.message}", True)
            self.app.notify("error", f"{banner}: {failed.message}", details=failed.details)
