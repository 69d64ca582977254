"""What the in-process loop and the Ray pipeline do alike after each batch: report progress,
save the state now and then, stop when cancelled; and how a file that cannot be read is recorded."""

from __future__ import annotations

import time

import numpy as np

from ..errors import RunCancelled
from .batches import decode
from .job import AtlasJob
from .reduce import AtlasPass
from .store import Checkpoint

CHECKPOINT_EVERY_S = 30.0


def skip_record(job: AtlasJob, index: int, why: str) -> dict:
    return {"path": job.images.relative(job.images.files[index]), "reason": why}


def after_batch(checkpoint: Checkpoint, done: np.ndarray, tops, skipped, progress, cancel, saved_at: float,
                what: str = "Atlas") -> float:
    """Report progress; save the state every CHECKPOINT_EVERY_S and when cancelled (then raise RunCancelled).
    `what`: the job's name in that message (the concepts' pass uses this loop too)."""
    count, total = int(done.sum()), done.size
    if progress:
        progress(count, total)
    stop = cancel is not None and cancel()
    if stop or time.monotonic() - saved_at > CHECKPOINT_EVERY_S:
        checkpoint.save(done, tops, skipped)
        saved_at = time.monotonic()
    if stop:
        raise RunCancelled(f"{what} cancelled after {count} of {total} images; run it again with the same "
                           f"arguments to resume from there.")
    return saved_at


def check_finished_state(module, job: AtlasJob, checkpoint: Checkpoint, tops, done: np.ndarray) -> None:
    """A saved state with every image done meets no batch that checks it against the model's layers
    (`Checkpoint.check_fits`): one image it keeps is run once, on the module's device, for their shapes."""
    if not tops or not done.all():
        return
    kept = next(iter(tops.values())).image
    if not (kept >= 0).any():
        return
    x = decode(job.images.files[int(kept[kept >= 0][0])], job.preprocess)
    if isinstance(x, str):  # it was read when the state was saved; unreadable now: the job's key has changed
        return
    device = next(iter(module.parameters()), None)
    atlas_pass = AtlasPass(module, job.layers, job.grid)
    atlas_pass.run(x if device is None else x.to(device.device))
    for path, top in tops.items():
        layout = atlas_pass.layouts[path]
        checkpoint.check_fits(path, top, layout.channels, layout.width, layout.height * layout.width)
