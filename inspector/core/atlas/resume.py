"""A saved state the atlas resumes from, checked against the model before it is believed."""

from __future__ import annotations

import numpy as np

from ..folder_jobs import FolderJob, decode
from .reduce import AtlasPass
from .store import Checkpoint


def check_finished_state(module, job: FolderJob, checkpoint: Checkpoint, tops, done: np.ndarray) -> None:
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
