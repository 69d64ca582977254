"""The pass over the folder: each image's layer output as samples (one per position or token, C channels),
appended to the job's sample cache. The folder jobs' parts do the work: their prefetched batches (decoding ahead
on threads), layouts (NCHW, NHWC, tokens on the model's grid), after-batch loop (progress, the state saved every
30 s and on cancel) and skip records. The pass on Ray (`ray_samples`) keeps its samples and ends its batches by
the same two rules (`keep`, `batch_done`)."""

from __future__ import annotations

import time

import numpy as np
import torch

from ..common.errors import SpecError
from ..folder_jobs import (
    Layout,
    after_batch,
    decode,
    layer_tensor,
    layout_of,
    prefetched_batches,
    skip_record,
)
from ..sources.layers import channel_layouts
from .dictionary import ConceptError
from .job import MB, ConceptJob
from .store import SampleCache, State

#: the layout word a dictionary keeps for each of the atlas's layouts
LAYOUT_WORD = {"nchw": "NCHW", "nhwc": "NHWC", "tokens": "NLC", "sequence": "NLC", "vector": "NC"}


class LayerSamples:
    """Forward passes with one hook on `layer`: its output as (B, P, C) float32 samples on the CPU."""

    def __init__(self, module: torch.nn.Module, layer: str, grid) -> None:
        self.module, self.layer, self.grid = module, layer, grid
        self.target = dict(module.named_modules())[layer]
        self.layout: Layout | None = None
        self._said: dict | None = None

    def run(self, x: torch.Tensor) -> torch.Tensor:
        found = []
        if self._said is None:
            self._said = channel_layouts(self.module, x[:1])

        def hook(_module, _args, output):
            if found:
                return  # a shared module's later calls
            output = layer_tensor(output, self.layer, "concepts need its activations")
            if self.layout is None:
                self.layout = layout_of(self.layer, tuple(output.shape), self.grid, self._said.get(self.layer))
            found.append(self.layout.positions(output.detach()).transpose(1, 2).float().cpu())

        handle = self.target.register_forward_hook(hook)
        try:
            with torch.inference_mode():
                self.module(x)
        finally:
            handle.remove()
        if not found:
            raise SpecError(f"Layer {self.layer} never ran in the model's forward; it has no activations to learn.")
        return found[0]


def check_signs(job: ConceptJob, v: torch.Tensor, image: int) -> None:
    """ConceptError, in one line naming `sae`, when NMF is asked of a layer with a negative value."""
    low = float(v.min()) if v.numel() else 0.0
    if low < 0:
        name = job.atlas.images.relative(job.atlas.images.files[image])
        raise ConceptError(f"Layer {job.layer} has negative values ({low:.3g} on {name}); NMF needs a non-negative "
                           f"layer (after a ReLU): learn them with the sparse autoencoder (method sae).")


def image_batch(loaded, job: ConceptJob, device) -> int:
    """Images per forward: --batch, fewer where their samples would take more than a quarter of --max-memory
    (one image's, measured on the first image that reads; for NMF its signs checked there, before the pass)."""
    for i, path in enumerate(job.atlas.images.files):
        x = decode(path, job.atlas.preprocess)
        if isinstance(x, torch.Tensor):
            v = LayerSamples(loaded.module, job.layer, job.atlas.grid).run(x.to(device))
            if job.settings.method == "nmf":
                check_signs(job, v, i)
            per_image = v.numel() * 4 * 2
            return int(max(1, min(job.settings.batch, int(job.settings.max_memory_mb * MB) // 4 // per_image)))
    return job.settings.batch  # none reads: the pass lists them all as skipped


def run_pass(loaded, job: ConceptJob, state: State, cache_of, device, progress, cancel) -> SampleCache | None:
    """Every image not done yet through the model; its samples into the cache (`cache_of(channels)` opens it once
    the layer's width is known). The cache, or None when no image could be read."""
    sampler = LayerSamples(loaded.module, job.layer, job.atlas.grid)
    cache = cache_of(state.info["channels"]) if "channels" in state.info else None
    if "batch" not in state.info:
        state.info["batch"] = image_batch(loaded, job, device)
    skipped = state.info["skipped"]
    saved_at = time.monotonic()
    total = len(job.atlas.images)
    if progress:
        progress("pass", int(state.done.sum()), total)
    todo = np.nonzero(~state.done)[0]
    for chunk, groups, failed in prefetched_batches(job.atlas.images.files, job.atlas.preprocess,
                                                    state.info["batch"], todo):
        skipped.extend(skip_record(job.atlas, i, why) for i, why in failed)
        for images, x in groups:
            v = sampler.run(x.to(device))  # (B, P, C)
            layout = sampler.layout
            if job.settings.method == "nmf":
                check_signs(job, v, int(images[0]))
            samples = v.numpy()
            for j, i in enumerate(images):
                cache = keep(job, state, cache, cache_of, int(i), samples[j], layout.height,
                             samples.shape[1] // max(layout.height, 1), layout.kind)
        saved_at = batch_done(state, cache, chunk, skipped, progress, cancel, saved_at)
    return cache


def keep(job: ConceptJob, state: State, cache: SampleCache | None, cache_of, image: int, samples: np.ndarray,
         height: int, width: int, kind: str) -> SampleCache:
    """One image's (P, C) samples into the cache (opened by `cache_of(C)` at the first; a layer that gives another
    C than the saved state is a ConceptError), on the held-out or the training side; the cache."""
    if cache is None:
        state.info.update(channels=samples.shape[1], layout=LAYOUT_WORD[kind])
        cache = cache_of(samples.shape[1])
    elif samples.shape[1] != state.info["channels"]:
        raise ConceptError(f"Layer {job.layer} gives {samples.shape[1]} channels here, {state.info['channels']} "
                           f"in the saved state; run again with --restart.")
    state.start[image] = cache.append("held" if job.held[image] else "train", samples)
    state.height[image], state.width[image] = height, width
    return cache


def batch_done(state: State, cache: SampleCache | None, images, skipped: list, progress, cancel,
               saved_at: float) -> float:
    """A batch's `images` done: the cache's place kept in the state, then the folder jobs' after-batch loop."""
    state.done[images] = True
    if cache is not None:
        state.info.update(cache.record())
    return after_batch(state, state.done, None, skipped, (lambda d, t: progress("pass", d, t)) if progress else None,
                       cancel, saved_at, what="Concepts")
