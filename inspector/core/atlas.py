"""The channel atlas: for every channel of the chosen layers, the dataset images that excite it most.

`run_atlas` streams a folder of images through the model in batches (forward only, hooks that
reduce on the device, `inspector.core.atlas_pass`), keeps the top K images of every channel with
the argmax position and running statistics (`inspector.core.atlas_topk`), and writes
OUT_DIR/atlas.json with a thumbnail of the region around each top entry's argmax
(`inspector.core.atlas_thumbs`). It can be cancelled between batches and resumes from the state it
saved when run again with the same arguments; an OUT_DIR holding another job's atlas is refused.
`use_ray=True` runs the same job as a Ray Data pipeline (`inspector.core.atlas_ray`, imported only
then).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

import numpy as np

from .atlas_job import AtlasJob, Checkpoint, check_out_dir, job_of, read_json, write_json
from .atlas_topk import LayerTop
from .errors import AtlasError, RunCancelled
from .models import LoadedModel

ProgressFn = Callable[[int, int], None]
CancelFn = Callable[[], bool]
ATLAS_FILE = "atlas.json"
CHECKPOINT_EVERY_S = 30.0
THUMB_NAME = "{channel}_{rank}.png"  # in OUT_DIR/thumbnails/LAYER/


def run_atlas(loaded: LoadedModel, data_dir, layers: str, top: int, out_dir, *, batch: int = 16,
              device: str = "cpu", progress: ProgressFn | None = None, cancel: CancelFn | None = None,
              ray_address: str | None = None, use_ray: bool = False, thumbnails: bool = True) -> dict:
    """Build the atlas of `layers` (patterns as in `capture`) over the images in `data_dir` and write it to
    `out_dir`; returns the atlas.json content. Cancelled (`cancel()` true between batches): saves its
    state and raises RunCancelled; the same call later resumes there. Nothing is written when the
    arguments are wrong (no images, a pattern matching no layer, an out_dir with another job's atlas).
    `thumbnails=False` leaves the crops out (the benchmark times the pass over the data alone)."""
    job = job_of(loaded, data_dir, layers, top, batch)
    if ray_address:
        from .atlas_ray import check_address

        check_address(ray_address)  # before anything is written, and at once (Ray retries for minutes)
    out = Path(out_dir)
    done = check_out_dir(out, job)
    if done is not None:
        if progress:
            progress(len(job.images), len(job.images))
        return done
    if use_ray or ray_address:
        from .atlas_ray import run_on_ray

        tops, skipped = run_on_ray(loaded, job, out, device, progress, cancel, ray_address)
    else:
        tops, skipped = _run_here(loaded, job, out, device, progress, cancel)
    return _finish(loaded, job, out, tops, skipped, thumbnails)


def _run_here(loaded: LoadedModel, job: AtlasJob, out: Path, device: str, progress, cancel):
    import torch

    from .atlas_batches import prefetched_batches
    from .atlas_pass import AtlasPass, to_partial
    from .devices import resolve_device

    dev = resolve_device(device)
    loaded.module.to(dev)
    checkpoint = Checkpoint(out, job)
    done, tops, skipped = checkpoint.load()
    atlas_pass = AtlasPass(loaded.module, job.layers, job.grid)
    total = len(job.images)
    saved_at = time.monotonic()
    thresholds = {p: torch.as_tensor(t.threshold(), device=dev) for p, t in tops.items()}
    if progress:
        progress(int(done.sum()), total)
    todo = np.nonzero(~done)[0]
    for chunk, groups, failed in prefetched_batches(job.images.files, job.preprocess, job.batch, todo):
        skipped.extend(skip_record(job, i, why) for i, why in failed)
        for images, x in groups:
            reduced = atlas_pass.run(x.to(dev), thresholds)
            for path, r in reduced.items():
                layout = atlas_pass.layouts[path]
                layer = tops.get(path) or tops.setdefault(path, LayerTop(layout.channels, job.top, layout.width))
                layer.add(to_partial(r, images))
                thresholds[path] = torch.as_tensor(layer.threshold(), device=dev)
        done[chunk] = True
        saved_at = _after_batch(checkpoint, done, tops, skipped, progress, cancel, saved_at)
    return tops, skipped


def skip_record(job: AtlasJob, index: int, why: str) -> dict:
    return {"path": job.images.relative(job.images.files[index]), "reason": why}


def _after_batch(checkpoint: Checkpoint, done: np.ndarray, tops, skipped, progress, cancel, saved_at: float) -> float:
    """Report progress; save the state every CHECKPOINT_EVERY_S and when cancelled (then raise RunCancelled)."""
    count, total = int(done.sum()), done.size
    if progress:
        progress(count, total)
    stop = cancel is not None and cancel()
    if stop or time.monotonic() - saved_at > CHECKPOINT_EVERY_S:
        checkpoint.save(done, tops, skipped)
        saved_at = time.monotonic()
    if stop:
        raise RunCancelled(f"Atlas cancelled after {count} of {total} images; run it again with the same "
                           f"arguments to resume from there.")
    return saved_at


def _finish(loaded: LoadedModel, job: AtlasJob, out: Path, tops: dict[str, LayerTop], skipped: list[dict],
            thumbnails: bool = True) -> dict:
    from .atlas_thumbs import write_thumbnails

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
    Checkpoint(out, job).clear()
    return atlas


def read_atlas(out_dir) -> dict:
    """The atlas.json in `out_dir` (or the file itself), checked to be an atlas; AtlasError otherwise."""
    path = Path(out_dir)
    if path.is_dir():
        path = path / ATLAS_FILE
    if not path.is_file():
        raise AtlasError(f"No atlas at {path} (build one with `network-inspector atlas`).")
    atlas = read_json(path)
    layers = atlas.get("layers") if isinstance(atlas, dict) else None
    if not isinstance(layers, dict) or not all(k in atlas for k in ("model", "images", "skipped")) or not all(
            isinstance(v, dict) and {"channels", "top", "mean", "std", "frac_positive"} <= v.keys()
            for v in layers.values()):
        raise AtlasError(f"{path} is not a channel atlas (it lacks model, images, skipped or layers with "
                         f"channels, top, mean, std and frac_positive).")
    for name, layer in layers.items():
        if len(layer["top"]) != layer["channels"]:
            raise AtlasError(f"{path}: layer {name} lists {len(layer['top'])} channels' top images for "
                             f"{layer['channels']} channels.")
    return atlas


def thumbnail_path(out_dir, layer: str, channel: int, rank: int) -> Path:
    """Where the crop around the argmax of `layer`'s channel `channel`, top entry `rank` (0 = best), is."""
    return Path(out_dir) / "thumbnails" / layer / THUMB_NAME.format(channel=int(channel), rank=int(rank))


__all__ = ["run_atlas", "read_atlas", "thumbnail_path"]
