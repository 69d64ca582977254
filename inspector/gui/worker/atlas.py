"""Part of the worker (`Worker`): the channel atlas. Opening one, building one from the loaded model
(`inspector.core.atlas.run_atlas`, with progress, cancelled by the worker's cancel), and the
pictures of a channel's top images. Plain records go back: an OpenedAtlas, TopPictures."""

from __future__ import annotations

from inspector.core.records.failure import failure

from ..common.progress_rate import rate_reporter


class AtlasJobs:
    """Mixed into Worker (which has `bench`, `_cancel`, `_atlas_cache` and the signals)."""

    def _run_atlas(self, request) -> None:
        try:
            if request.kind == "build":
                self._build_atlas(request)
            elif request.kind == "open":
                from inspector.core.atlas.pictures import open_atlas

                self._sigPhase.emit("Opening the atlas")
                self._opened(open_atlas(request.out_dir), request.run_id)
            else:
                self._atlas_pictures(request)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a message
            self._sigFailed.emit(failure(exc, "atlas", request.run_id))

    def _build_atlas(self, request) -> None:

        from inspector.core.atlas import run_atlas
        from inspector.core.atlas.pictures import open_atlas

        loaded, _tree = self.bench.load(request.model)
        progress = atlas_progress(self._sigPhase.emit, self._sigAtlasProgress.emit)

        try:
            run_atlas(loaded, request.data_dir, ",".join(request.layers), request.top, request.out_dir,
                      batch=request.batch, device=request.device, progress=progress, cancel=self._cancel.is_set)
        finally:
            self.bench.move_to(request.device)  # the model stays where the app runs it
        self._opened(open_atlas(request.out_dir), request.run_id)

    def _opened(self, opened, run_id: int) -> None:
        self._atlas_cache = {opened.out_dir: opened}
        self._sigAnswer.emit("atlas", run_id, opened)

    def _atlas_pictures(self, request) -> None:
        from inspector.core.atlas.pictures import open_atlas, top_pictures

        opened = self._atlas_cache.get(request.out_dir)
        if opened is None:
            opened = open_atlas(request.out_dir)
            self._atlas_cache = {opened.out_dir: opened}
        self._sigAnswer.emit("pictures", request.run_id, top_pictures(opened, request.layer, request.channel))


def atlas_progress(say, tell):
    """The progress callback of an atlas build: `say` the phase ("Atlas: 500 of 600 images (50.0/s, 2 s
    left; Esc cancels)"), `tell(done, total)`. A resumed build counts only the images of this run."""
    return rate_reporter("Atlas", "images", say, tell, from_first_report=True)
