"""The atlas job in this process: batches decoded ahead on threads, reduced on the device."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import torch

from ..sources.devices import resolve_device
from ..folder_jobs import (
    FolderJob,
    LayerTop,
    after_batch,
    prefetched_batches,
    skip_record,
)
from ..sources.loaded import LoadedModel
from .reduce import AtlasPass, to_partial
from .resume import check_finished_state
from .store import checkpoint_of


def run_here(loaded: LoadedModel, job: FolderJob, out: Path, device: str, progress, cancel):
    dev = resolve_device(device)
    loaded.module.to(dev)
    checkpoint = checkpoint_of(job, out)
    done, tops, skipped = checkpoint.load()
    check_finished_state(loaded.module, job, checkpoint, tops, done)
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
            # the saved state's thresholds only once the layers' shapes are known to fit it (check_fits)
            reduced = atlas_pass.run(x.to(dev), thresholds if atlas_pass.layouts else None)
            for path, r in reduced.items():
                layout = atlas_pass.layouts[path]
                layer = tops.get(path) or tops.setdefault(path, LayerTop(layout.channels, job.top, layout.width))
                checkpoint.check_fits(path, layer, layout.channels, layout.width, layout.height * layout.width)
                layer.add(to_partial(r, images))
                thresholds[path] = torch.as_tensor(layer.threshold(), device=dev)
            checkpoint.seen[images] += sum(r.positions for r in reduced.values())
        done[chunk] = True
        saved_at = after_batch(checkpoint, done, tops, skipped, progress, cancel, saved_at)
    return tops, skipped
