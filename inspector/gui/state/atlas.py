"""The channel atlas the Atlas view shows (`AppState.atlas`).

Opening and building happen in the worker (building uses the loaded model and the ticked
layers, with progress; Esc or the view's Cancel stops it, and building again resumes). The
pictures of a channel's top images are decoded there too, latest wins.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal

from inspector.core.records.requests import AtlasRequest

from .folder_job import FolderJobState

BUILD_STAGES = "Atlas: "  # how the build's own phases begin (worker_atlas.atlas_progress)


class AtlasState(FolderJobState):
    """Signals (and FolderJobState's: sigBuilding, sigProgress of images done and in all, sigBuildText)
    -------
    sigOpened(object): an atlas was opened or built (an OpenedAtlas).
    sigPictures(object): the TopPictures of the channel last asked for.
    sigOwner(str): "" when the open atlas is the loaded model's; else why it is not (another model,
        weights, seed or preprocessing built it): its pictures are then not this model's channels.
    """

    sigOpened = Signal(object)
    sigPictures = Signal(object)
    sigOwner = Signal(str)

    def __init__(self, app, worker) -> None:
        super().__init__(app, BUILD_STAGES, worker.sigAtlasProgress, worker.sigPhase)
        self.worker = worker
        self.opened = None  # the OpenedAtlas the Atlas view shows
        self._pictures_id = 0
        worker.sigAnswer.connect(self._on_answer)
        app.sigModelLoaded.connect(lambda _info, _ticks: self._say_owner())

    def not_of(self) -> str | None:
        """None when the open atlas is the loaded model's; else why not (also when none is open)."""
        if self.opened is None:
            return "no atlas is open"
        return self.opened.not_of(self.app.model)

    def open(self, path: str) -> None:
        self.worker.request_atlas(AtlasRequest("open", str(path)))

    def build(self, data_dir: str, out_dir: str, top: int = 9, batch: int = 16) -> bool:
        """Build an atlas of the ticked layers of the loaded model over the images in `data_dir`."""
        app = self.app
        if app.model is None:
            app.notify("info", "Load a model first: the atlas is built from the loaded model.")
            return False
        layers = tuple(app.ticked())
        if not layers:
            app.notify("info", "Tick the layers the atlas is for in the Modules tree first.")
            return False
        request = AtlasRequest("build", str(out_dir), app.model.request, str(data_dir), layers, int(top), int(batch),
                               app.usable_device())
        self._begin_build(lambda: self.worker.request_atlas(request))
        return True

    def _stop_build(self) -> None:
        self.app.cancel()  # the worker's cancel, as Esc

    def pictures(self, layer: str, channel: int) -> None:
        """Ask for the pictures of `layer`'s channel `channel` top images (sigPictures brings them)."""
        if self.opened is None:
            return
        self._pictures_id += 1
        self.worker.request_atlas(AtlasRequest("pictures", self.opened.out_dir, layer=layer, channel=int(channel),
                                               run_id=self._pictures_id))

    def use_image(self, relative: str) -> bool:
        """Make a top image of the atlas the input."""
        opened = self.opened
        path = opened.image_path(relative) if opened is not None else None
        if path is None:
            where = opened.data if opened is not None and opened.data else "an unknown folder"
            self.app.notify("error", f"{relative} is not in {where} any more: it cannot become the input.")
            return False
        self.app.set_input(str(path))
        return True

    def _on_answer(self, lane: str, run_id: int, found) -> None:
        if lane == "atlas":
            self._on_atlas(found)
        elif lane == "pictures":
            self._on_pictures(run_id, found)

    def _on_atlas(self, opened) -> None:
        self.opened = opened
        self._end_build("done")
        atlas = opened.atlas
        skipped = f", {len(atlas['skipped'])} skipped" if atlas["skipped"] else ""
        why = self.not_of()
        level, whose = ("info", "") if why is None else ("warning", f" It is not the loaded model's atlas: {why}.")
        self.app.notify(level, f"Atlas of {atlas['model']} over {atlas['images']} images{skipped}: "
                               f"{', '.join(opened.layers())} ({Path(opened.out_dir)}).{whose}")
        self.sigOpened.emit(opened)
        self._say_owner()

    def _say_owner(self) -> None:
        if self.opened is not None:
            self.sigOwner.emit(self.not_of() or "")

    def _on_pictures(self, run_id: int, pictures) -> None:
        if run_id == self._pictures_id:
            self.sigPictures.emit(pictures)

    def failed(self, failure=None) -> None:
        """An atlas job failed (`failure`: its Failure): a build ends, cancelled or failed."""
        self._end_build("cancelled" if failure is not None and failure.cancelled else "failed")
