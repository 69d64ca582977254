"""The atlas job as a Ray Data pipeline: decode tasks, model replicas as actors, partials merged here.

Images are read and decoded by parallel Ray tasks (`map_batches` with a function), then reduced by
model replicas (`map_batches` with a class: one actor per GPU when the job asks for a GPU device and
the cluster has GPUs, else CPU actors). Each replica sends back, per batch, only what can enter the
top K (it keeps its own running thresholds) and the batch's statistics; the driver merges them as
they stream in (`LayerTop.add`), so its memory stays independent of the dataset. The top K equals
the in-process job's (same ranking rule, ties by image index); statistics agree to float rounding.
Cancelling saves which images are done, so the job resumes (here or in process) when run again.

Ray is imported only here, and only when `--ray` is asked for.
"""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import numpy as np
import torch

from ..sources.devices import resolve_device
from ..folder_jobs import (
    LayerPartial,
    LayerTop,
    after_batch,
    batch_tensors,
    ray_for_job,
    replica_rows,
    skip_record,
    stack_groups,
)
from .reduce import AtlasPass, to_partial
from .resume import check_finished_state
from .store import checkpoint_of

_PARTIAL_FIELDS = ("channel", "image", "score", "pos", "count", "mean", "m2", "positive")


def pack(partials: dict[int, tuple[LayerPartial, int, int, int]], indices: np.ndarray, skipped: list,
         seen: np.ndarray) -> bytes:
    """A batch's partials (layer number -> (partial, channels, map width, positions)) as bytes (npz, no pickle);
    `seen`: the positions each of `indices` gave over the layers (0: skipped)."""
    arrays = {"indices": np.asarray(indices, np.int64), "seen": np.asarray(seen, np.int64),
              "skipped": np.frombuffer(json.dumps(skipped).encode(), np.uint8)}
    for number, (part, channels, width, positions) in partials.items():
        arrays[f"L{number}/shape"] = np.array([channels, width, positions], np.int64)
        for name in _PARTIAL_FIELDS:
            arrays[f"L{number}/{name}"] = getattr(part, name)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def unpack(blob: bytes):
    with np.load(io.BytesIO(blob), allow_pickle=False) as arrays:
        indices, seen = arrays["indices"], arrays["seen"]
        skipped = json.loads(arrays["skipped"].tobytes().decode())
        layers = {}
        for key in arrays.files:
            if key.endswith("/shape"):
                number = int(key[1:].split("/")[0])
                channels, width, positions = (int(v) for v in arrays[key])
                part = LayerPartial(*(arrays[f"L{number}/{name}"] for name in _PARTIAL_FIELDS))
                layers[number] = (part, channels, width, positions)
    return indices, skipped, layers, seen


class Replica:
    """Ray actor: a model replica reducing batches with the atlas's hooks."""

    def __init__(self, module_ref: list, layers: list[str], grid, top: int, device: str, preprocess) -> None:
        import ray  # in the actor, where Ray runs

        self.device = resolve_device(device)
        self.module = ray.get(module_ref[0]).to(self.device).eval()
        self.layers, self.top, self.preprocess = layers, top, preprocess
        self.atlas_pass = AtlasPass(self.module, layers, grid)
        self.tops: dict[str, LayerTop] = {}
        self.torch = torch

    def __call__(self, batch: dict) -> dict:
        torch = self.torch
        indices = batch["index"]
        good, tensors, skipped = batch_tensors(batch, self.preprocess)
        collected: dict[int, list] = {}
        seen = dict.fromkeys((int(i) for i in indices), 0)
        for images, x in stack_groups(good, tensors):
            thresholds = {p: torch.as_tensor(t.threshold(), device=self.device) for p, t in self.tops.items()}
            reduced = self.atlas_pass.run(x.to(self.device), thresholds, inclusive=True)
            for number, path in enumerate(self.layers):
                layout = self.atlas_pass.layouts[path]
                part = to_partial(reduced[path], images)
                mine = self.tops.get(path) or self.tops.setdefault(path, LayerTop(layout.channels, self.top,
                                                                                  layout.width))
                mine.add(part)
                collected.setdefault(number, []).append((part, layout.channels, layout.width,
                                                         layout.height * layout.width))
                for i in images:
                    seen[int(i)] += reduced[path].positions
        merged = {n: (_concat([p[0] for p in parts]), *parts[0][1:]) for n, parts in collected.items()}
        payload = pack(merged, indices, skipped, np.array([seen[int(i)] for i in indices], np.int64))
        return {"payload": np.array([payload], dtype=object)}


def _concat(parts: list[LayerPartial]) -> LayerPartial:
    if len(parts) == 1:
        return parts[0]
    acc = LayerTop(len(parts[0].count), 1, 1)  # Chan's merge of the statistics
    for p in parts:
        acc.add(LayerPartial(p.channel[:0], p.image[:0], p.score[:0], p.pos[:0], p.count, p.mean, p.m2, p.positive))
    return LayerPartial(*(np.concatenate([getattr(p, f) for p in parts]) for f in _PARTIAL_FIELDS[:4]),
                        acc.count, acc.mean, acc.m2, acc.positive)


def run_on_ray(loaded, job, out: Path, device: str, progress, cancel, address: str | None):
    """The job's layers' LayerTop and skipped files, computed on Ray (a local instance when `address` is None
    and Ray is not started in this process yet: started for the job and gone with every process after it)."""
    with ray_for_job(address) as ray:
        return _run(ray, loaded, job, out, device, progress, cancel)


def _run(ray, loaded, job, out: Path, device: str, progress, cancel):
    checkpoint = checkpoint_of(job, out)
    done, tops, skipped = checkpoint.load()
    check_finished_state(loaded.module, job, checkpoint, tops, done)
    rows = replica_rows(ray, loaded.module, job.images.files, np.nonzero(~done)[0], job.batch, job.preprocess,
                        Replica, (list(job.layers), job.grid, job.top), device)
    saved_at = time.monotonic()
    if progress:
        progress(int(done.sum()), len(done))
    for row in rows:
        indices, failed, layers, seen = unpack(row["payload"])
        skipped.extend(skip_record(job, i, why) for i, why in failed)
        for number, (part, channels, width, positions) in layers.items():
            path = job.layers[number]
            layer = tops.get(path) or tops.setdefault(path, LayerTop(channels, job.top, width))
            checkpoint.check_fits(path, layer, channels, width, positions)
            layer.add(part)
        checkpoint.seen[indices] += seen
        done[indices] = True
        saved_at = after_batch(checkpoint, done, tops, skipped, progress, cancel, saved_at)
    return tops, skipped
