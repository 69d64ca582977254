"""The concepts' activation pass as a Ray Data pipeline, as the atlas runs its own: a folder job's decode tasks
and replicas (`folder_jobs.replica_rows`) in its Ray instance (`ray_for_job`: a local one, or the cluster at
ADDRESS), the model replicas here actors that send back each image's samples, written to the sample cache here as they stream in. The fit
reads the cache in the listing's order, so the order the replicas answer in does not change the dictionary.
Cancelling saves which images are done; the job resumes (here or in process). Ray is imported only here."""

from __future__ import annotations

import io
import json
import time

import numpy as np
import torch

from ..sources.devices import resolve_device
from ..folder_jobs import (
    batch_tensors,
    ray_for_job,
    replica_rows,
    skip_record,
    stack_groups,
)
from .samples import LayerSamples, batch_done, check_signs, keep


class SampleReplica:
    """Ray actor: a model replica giving each image's samples of one layer (npz bytes, no pickle)."""

    def __init__(self, module_ref: list, layer: str, grid, device: str, preprocess) -> None:
        import ray

        self.device = resolve_device(device)
        self.module = ray.get(module_ref[0]).to(self.device).eval()
        self.sampler = LayerSamples(self.module, layer, grid)
        self.preprocess = preprocess

    def __call__(self, batch: dict) -> dict:
        good, tensors, skipped = batch_tensors(batch, self.preprocess)
        images, samples, sizes, kind = [], [], [], ""
        for indices, x in stack_groups(good, tensors):
            v = self.sampler.run(x.to(self.device)).numpy()  # (B, P, C)
            layout = self.sampler.layout
            kind = layout.kind
            for j, i in enumerate(indices):
                images.append(int(i))
                samples.append(v[j])
                sizes.append([layout.height, v.shape[1] // max(layout.height, 1)])
        arrays = {"indices": np.asarray(batch["index"], np.int64), "images": np.asarray(images, np.int64),
                  "sizes": np.asarray(sizes, np.int64).reshape(-1, 2),
                  "samples": np.concatenate(samples) if samples else np.zeros((0, 0), np.float32),
                  "meta": np.frombuffer(json.dumps({"skipped": skipped, "kind": kind}).encode(), np.uint8)}
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        return {"payload": np.array([buffer.getvalue()], dtype=object)}


def run_pass_on_ray(loaded, job, state, cache_of, device: str, progress, cancel, address: str | None):
    """`samples.run_pass` on Ray: the cache, or None when no image could be read."""
    with ray_for_job(address) as ray:
        return _run(ray, loaded, job, state, cache_of, device, progress, cancel)


def _run(ray, loaded, job, state, cache_of, device: str, progress, cancel):
    cache = cache_of(state.info["channels"]) if "channels" in state.info else None
    skipped = state.info["skipped"]
    rows = replica_rows(ray, loaded.module, job.atlas.images.files, np.nonzero(~state.done)[0], state.info["batch"],
                        job.atlas.preprocess, SampleReplica, (job.layer, job.atlas.grid), device)
    saved_at = time.monotonic()
    if progress:
        progress("pass", int(state.done.sum()), len(state.done))
    for row in rows:
        with np.load(io.BytesIO(row["payload"]), allow_pickle=False) as arrays:
            indices, images, sizes = arrays["indices"], arrays["images"], arrays["sizes"]
            samples = arrays["samples"]
            meta = json.loads(arrays["meta"].tobytes().decode())
        skipped.extend(skip_record(job.atlas, i, why) for i, why in meta["skipped"])
        offset = 0
        for i, (h, w) in zip(images, sizes):
            part = samples[offset:offset + h * w]
            offset += h * w
            if job.settings.method == "nmf":
                check_signs(job, torch.from_numpy(part), int(i))
            cache = keep(job, state, cache, cache_of, int(i), part, h, w, meta["kind"])
        saved_at = batch_done(state, cache, indices, skipped, progress, cancel, saved_at)
    return cache
