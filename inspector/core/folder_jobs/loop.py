"""What a folder job's loops (in process and on Ray, the atlas's and the concepts') do alike after each batch:
report progress, save the state now and then, stop when cancelled; and how a file that cannot be read is recorded."""

from __future__ import annotations

import time

import numpy as np

from ..common.errors import RunCancelled
from .job import FolderJob

CHECKPOINT_EVERY_S = 30.0


def skip_record(job: FolderJob, index: int, why: str) -> dict:
    return {"path": job.images.relative(job.images.files[index]), "reason": why}


def after_batch(checkpoint, done: np.ndarray, tops, skipped, progress, cancel, saved_at: float,
                what: str = "Atlas") -> float:
    """Report progress; save the state every CHECKPOINT_EVERY_S and when cancelled (then raise RunCancelled).
    `checkpoint`: what saves the job's state (`save(done, tops, skipped)`); `what`: the job's name in that
    message."""
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

