"""The channel atlas: for every channel of the chosen layers, the dataset images that excite it most.

`run_atlas` streams a folder of images through the model in batches (forward only, hooks that
reduce on the device, `reduce`), keeps the top K images of every channel with
the argmax position and running statistics (`folder_jobs.top`), and writes
OUT_DIR/atlas.json with a thumbnail of the region around each top entry's argmax
(`folder_jobs.thumbnails`). It can be cancelled between batches and resumes from the state it
saved when run again with the same arguments; an OUT_DIR holding another job's atlas is refused.
`use_ray=True` runs the same job as a Ray Data pipeline (`ray_pipeline`; Ray is imported only
then).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from ..common.arguments import checked
from ..sources.devices import resolve_device
from ..common.errors import AtlasError
from ..folder_jobs import (
    FolderJob,
    LayerTop,
    check_address,
    job_of,
    run_job,
    thumbnail_path,
    write_json,
    write_thumbnails,
)
from ..storage.outputs import output_folder
from ..sources.loaded import LoadedModel, tree_of
from .local import run_here
from .ray_pipeline import run_on_ray
from .store import (
    ATLAS_FILE,
    FOLDER,
    checkpoint_of,
    read_atlas,
)

ProgressFn = Callable[[int, int], None]
CancelFn = Callable[[], bool]


@checked
def run_atlas(loaded: LoadedModel, data_dir: str | os.PathLike, layers: str | list[str] | tuple[str, ...], top: int,
              out_dir: str | os.PathLike, *, batch: int = 16, device: str = "cpu", progress: ProgressFn | None = None,
              cancel: CancelFn | None = None, ray_address: str | None = None, use_ray: bool = False,
              thumbnails: bool = True, restart: bool = False) -> dict:
    """Build the atlas of `layers` (patterns as in `capture`) over the images in `data_dir` and write it to
    `out_dir`; returns the atlas.json content. Cancelled (`cancel()` true between batches): saves its
    state and raises RunCancelled; the same call later resumes there (`restart=True` starts over).
    Nothing is written when the arguments are wrong (no images, a pattern matching no layer, an out_dir
    with another job's atlas, a device or Ray address that is not there). One job builds in a folder at a
    time (a lock file). The output folder, when inside `data_dir`, is not part of the data.
    `thumbnails=False` leaves the crops out (the benchmark times the pass over the data alone)."""
    out = output_folder(out_dir)
    job = job_of(loaded, tree_of(loaded), data_dir, layers, top, batch, exclude=out)
    resolve_device(device)  # a device that is not there fails the start, before anything is written
    if ray_address:
        check_address(ray_address)  # before anything is written, and at once (Ray retries for minutes)

    def work() -> tuple[dict[str, LayerTop], list[dict]]:
        if use_ray or ray_address:
            return run_on_ray(loaded, job, out, device, progress, cancel, ray_address)
        return run_here(loaded, job, out, device, progress, cancel)

    return run_job(out, FOLDER, job.key, job.arguments, restart, work,
                   lambda done: _finish(loaded, job, out, *done, thumbnails), checkpoint_of(job, out).saved,
                   len(job.images), progress)


def _finish(loaded: LoadedModel, job: FolderJob, out: Path, tops: dict[str, LayerTop], skipped: list[dict],
            thumbnails: bool = True) -> dict:
    if len(tops) < len(job.layers):
        raise AtlasError(f"None of the {len(job.images)} files in {job.images.root} could be read as an image "
                         f"({skipped[0]['path'] if skipped else ''}: {skipped[0]['reason'] if skipped else ''}).")
    names = job.images
    skipped = sorted(skipped, key=lambda s: s["path"])
    atlas = {"model": loaded.source, "images": len(names) - len(skipped), "skipped": skipped, "layers": {}}
    relative: dict[int, str] = {}  # an image in many channels' tops: its path worked out once (pathlib is slow)
    for path in job.layers:
        layer = tops[path]
        atlas["layers"][path] = {
            "channels": layer.channels,
            "top": [[{"image": relative.get(i) or relative.setdefault(i, names.relative(names.files[i])),
                      "score": s, "y": y, "x": x}
                     for i, s, y, x in layer.entries(c)] for c in range(layer.channels)],
            "mean": layer.mean.tolist(),
            "std": layer.std().tolist(),
            "frac_positive": layer.frac_positive().tolist(),
        }
    if thumbnails:
        write_thumbnails(loaded, job, out, atlas)
    write_json(out / ATLAS_FILE, atlas)
    checkpoint_of(job, out).clear()
    return atlas


__all__ = ["run_atlas", "read_atlas", "thumbnail_path"]
