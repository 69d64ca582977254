"""A folder job's build wired between its state (a `FolderJobState`) and its dock (a `FolderJobControls` view), the
same for the atlas and the concepts: Build… opens the controller's dialog, Cancel stops the build, and the build's
start, end, progress and words are shown."""

from __future__ import annotations


def wire_build(job, view, build_dialog) -> None:
    """`job`: the job's state; `view`: its dock; `build_dialog()`: asks what to build and builds it."""
    view.sigBuild.connect(build_dialog)
    view.sigCancel.connect(job.cancel)
    job.sigBuilding.connect(view.set_building)
    job.sigProgress.connect(view.set_progress)
    job.sigBuildText.connect(view.set_progress_text)  # (a dock without a line for them leaves them unsaid)
