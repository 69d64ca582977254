"""Part of the app's state (`AppState`): the channel atlas the Atlas view shows.

Opening and building happen in the worker (building uses the loaded model and the ticked
layers, with progress; Esc or the view's Cancel stops it, and building again resumes). The
pictures of a channel's top images are decoded there too, latest wins.
"""

from __future__ import annotations

from pathlib import Path

from inspector.core.records.requests import AtlasRequest


class AtlasState:
    """Mixed into AppState (which has `worker`, `model`, `device`, `devices`, `ticked`, `notify`,
    `set_input` and the signals)."""

    def open_atlas(self, path: str) -> None:
        self.worker.request_atlas(AtlasRequest("open", str(path)))

    def build_atlas(self, data_dir: str, out_dir: str, top: int = 9, batch: int = 16) -> bool:
        """Build an atlas of the ticked layers of the loaded model over the images in `data_dir`."""
        if self.model is None:
            self.notify("info", "Load a model first: the atlas is built from the loaded model.")
            return False
        layers = tuple(self.ticked())
        if not layers:
            self.notify("info", "Tick the layers the atlas is for in the Modules tree first.")
            return False
        usable = self.devices is None or self.device in dict(self.devices)
        self.worker.request_atlas(AtlasRequest("build", str(out_dir), self.model.request, str(data_dir), layers,
                                               int(top), int(batch), self.device if usable else "cpu"))
        self.atlas_building = True
        self.sigAtlasBuilding.emit(True)
        return True

    def atlas_pictures(self, layer: str, channel: int) -> None:
        """Ask for the pictures of `layer`'s channel `channel` top images (sigAtlasPictures brings them)."""
        if self.atlas is None:
            return
        self._atlas_pictures_id += 1
        self.worker.request_atlas(AtlasRequest("pictures", self.atlas.out_dir, layer=layer, channel=int(channel),
                                               run_id=self._atlas_pictures_id))

    def use_atlas_image(self, relative: str) -> bool:
        """Make a top image of the atlas the input."""
        path = self.atlas.image_path(relative) if self.atlas is not None else None
        if path is None:
            where = self.atlas.data if self.atlas is not None and self.atlas.data else "an unknown folder"
            self.notify("error", f"{relative} is not in {where} any more: it cannot become the input.")
            return False
        self.set_input(str(path))
        return True

    def _on_atlas(self, opened) -> None:
        self.atlas = opened
        if self.atlas_building:
            self.atlas_building = False
            self.sigAtlasBuilding.emit(False)
        atlas = opened.atlas
        skipped = f", {len(atlas['skipped'])} skipped" if atlas["skipped"] else ""
        self.notify("info", f"Atlas of {atlas['model']} over {atlas['images']} images{skipped}: "
                            f"{', '.join(opened.layers())} ({Path(opened.out_dir)}).")
        self.sigAtlas.emit(opened)

    def _on_atlas_pictures(self, run_id: int, pictures) -> None:
        if run_id == self._atlas_pictures_id:
            self.sigAtlasPictures.emit(pictures)

    def _atlas_failed(self) -> None:
        if self.atlas_building:
            self.atlas_building = False
            self.sigAtlasBuilding.emit(False)
