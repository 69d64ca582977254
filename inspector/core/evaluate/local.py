"""The evaluation in this process: images decoded a batch ahead on threads, each image's maps and metrics
(`compute`), the state saved now and then and when cancelled (`folder_jobs.after_batch`, after each image)."""

from __future__ import annotations

import time
from pathlib import Path

from ..common.errors import RunCancelled
from ..folder_jobs import after_batch, prefetched_batches, skip_record
from ..sources.devices import resolve_device
from .compute import image_values
from .store import WHAT, checkpoint_of


def run_here(loaded, job, out: Path, device: str, progress, cancel):
    """(which images are done, their values, the skipped files) once every image is done."""
    loaded.module.to(resolve_device(device))
    checkpoint = checkpoint_of(job, out)
    done, values, skipped = checkpoint.load()
    if progress:
        progress(int(done.sum()), done.size)
    saved_at = time.monotonic()
    todo = (~done).nonzero()[0]
    for chunk, groups, failed in prefetched_batches(job.images.files, job.preprocess, job.batch, todo):
        for i, why in failed:
            skipped.append(skip_record(job, i, why))
            done[i] = True
        if failed:
            saved_at = after_batch(checkpoint, done, values, skipped, progress, cancel, saved_at, WHAT)
        for images, x in groups:
            for i, one in zip(images, x.split(1)):
                try:
                    values[i] = image_values(loaded, one.to(loaded.device), job, cancel)
                except RunCancelled:  # inside a map: what is done is kept, as between images
                    saved_at = after_batch(checkpoint, done, values, skipped, None, lambda: True, saved_at, WHAT)
                done[i] = True
                saved_at = after_batch(checkpoint, done, values, skipped, progress, cancel, saved_at, WHAT)
    return done, values, skipped
