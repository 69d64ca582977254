"""A folder job's build wired between its state (a `FolderJobState`) and its dock (a `FolderJobControls` view), the
same for the atlas, the concepts and the evaluation: Build… opens the controller's dialog, Cancel stops the build, and
the build's start, end, progress and words are shown; Open… of a folder a job wrote, the same for the concepts and the
evaluation."""

from __future__ import annotations

from inspector.gui.common import file_dialogs


def wire_build(job, view, build_dialog) -> None:
    """`job`: the job's state; `view`: its dock; `build_dialog()`: asks what to build and builds it."""
    view.sigBuild.connect(build_dialog)
    view.sigCancel.connect(job.cancel)
    job.sigBuilding.connect(view.set_building)
    job.sigProgress.connect(view.set_progress)
    job.sigBuildText.connect(view.set_progress_text)  # (a dock without a line for them leaves them unsaid)


class OpensJobFolders:
    """Open… of a folder a job wrote, for a controller with `state` (its `FolderJobState`, whose `open(folder)` reads
    it), `raise_view()` (shows the job's view and returns it) and `OPENS`: the setting that keeps the last folder
    chosen and the dialog's title. The folder is chosen on the engine's machine where the engine is remote."""

    OPENS: tuple[str, str]

    def open_dialog(self) -> None:
        path = file_dialogs.choose_folder(self.dialog_parent(), *self.OPENS, engine=True)
        if path:
            self.open(path)

    def open(self, folder: str) -> bool:
        self.raise_view()
        return self.state.open(folder)
