"""The evaluation as a Ray Data pipeline: decode tasks, then model replicas as actors that make each image's maps
and metrics (`compute`, as in process) and send back its values; the driver records them as they stream in and
saves its state as the job in process does, so a job cancelled on Ray resumes here or there. Ray is imported only
when a job runs on it."""

from __future__ import annotations

import dataclasses
import io
import json
import time
from pathlib import Path

import numpy as np
import torch

from ..folder_jobs import after_batch, batch_tensors, ray_for_job, replica_rows, skip_record
from ..sources.devices import resolve_device
from ..sources.loaded import LoadedModel
from .compute import image_values
from .store import WHAT, checkpoint_of


def pack(indices: np.ndarray, values: np.ndarray, skipped: list) -> bytes:
    """A batch's answer as bytes (npz, no pickle): the images' indices, their values, the files skipped."""
    buffer = io.BytesIO()
    np.savez(buffer, indices=np.asarray(indices, np.int64), values=np.asarray(values, np.float64),
             skipped=np.frombuffer(json.dumps(skipped).encode(), np.uint8))
    return buffer.getvalue()


def unpack(blob: bytes) -> tuple[np.ndarray, np.ndarray, list]:
    with np.load(io.BytesIO(blob), allow_pickle=False) as arrays:
        return arrays["indices"], arrays["values"], json.loads(arrays["skipped"].tobytes().decode())


class Replica:
    """Ray actor: the model (shipped from the host) with what the loader said of it (`shell`: the LoadedModel's
    other fields), making the maps and metrics of each image of a batch."""

    def __init__(self, module_ref: list, shell: dict, job, device: str, preprocess) -> None:
        import ray  # in the actor, where Ray runs

        module = ray.get(module_ref[0]).to(resolve_device(device)).eval()
        self.loaded = LoadedModel(module, **shell)
        self.job, self.preprocess = job, preprocess

    def __call__(self, batch: dict) -> dict:
        good, tensors, skipped = batch_tensors(batch, self.preprocess)
        values = np.full((len(good), len(self.job.columns)), np.nan)
        for row, x in enumerate(tensors):
            values[row] = image_values(self.loaded, x.to(self.loaded.device), self.job)
        return {"payload": np.array([pack(np.array(good, np.int64), values, skipped)], dtype=object)}


def shell_of(loaded: LoadedModel) -> dict:
    """A LoadedModel's fields but its module: what a replica needs beside the module to be the same model."""
    return {f.name: getattr(loaded, f.name) for f in dataclasses.fields(loaded) if f.name != "module"}


def run_on_ray(loaded, job, out: Path, device: str, progress, cancel, address: str | None):
    """(which images are done, their values, the skipped files), computed on Ray (a local instance when `address`
    is None and Ray is not started in this process yet: started for the job and gone with every process after)."""
    with ray_for_job(address) as ray:
        checkpoint = checkpoint_of(job, out)
        done, values, skipped = checkpoint.load()
        rows = replica_rows(ray, loaded.module, job.images.files, np.nonzero(~done)[0], job.batch, job.preprocess,
                            Replica, (shell_of(loaded), job), device)
        saved_at = time.monotonic()
        if progress:
            progress(int(done.sum()), len(done))
        for row in rows:
            indices, answered, failed = unpack(row["payload"])
            skipped.extend(skip_record(job, i, why) for i, why in failed)
            values[indices] = answered
            done[indices] = True
            done[[i for i, _ in failed]] = True
            saved_at = after_batch(checkpoint, done, values, skipped, progress, cancel, saved_at, WHAT)
        return done, values, skipped
