"""The fit over the cached samples: a few epochs of batches, each batch a seeded mix of 64-row blocks taken in
the listing's order of images (so the batches do not depend on the order the pass wrote them in). Progress per
batch; the state saved every CHECKPOINT_EVERY_S and when cancelled (then RunCancelled), so a second run resumes
at the same batch with the same state."""

from __future__ import annotations

import contextlib
import time

import numpy as np
import torch

from ..common.errors import RunCancelled
from ..folder_jobs import CHECKPOINT_EVERY_S
from .job import ConceptJob
from .nmf import NmfFit
from .sae import SaeFit
from .store import SampleCache, State

BLOCK = 64
MOST_ROWS = {"nmf": 1024, "sae": 128}  # a batch's samples at most (MiniBatchNMF's default; SAE: more steps)


def listing_rows(state: State, job: ConceptJob, split: str) -> np.ndarray:
    """The cache rows of `split`'s samples, image by image in the listing's order."""
    held = job.held if split == "held" else ~job.held
    kept = np.nonzero(held & state.done & (state.start >= 0))[0]
    if kept.size == 0:
        return np.zeros(0, np.int64)
    counts = state.height[kept] * state.width[kept]
    starts = state.start[kept]
    offsets = np.repeat(starts - np.cumsum(counts) + counts, counts)
    return offsets + np.arange(int(counts.sum()))


def batch_rows(job: ConceptJob, channels: int) -> int:
    return max(BLOCK, min(job.sample_rows(channels), MOST_ROWS[job.settings.method]) // BLOCK * BLOCK)


def epoch_batches(rows: int, per_batch: int, seed: int, epoch: int) -> list[np.ndarray]:
    """The listing-order indices of each batch of one epoch."""
    blocks = -(-rows // BLOCK)
    order = np.random.default_rng([seed, epoch]).permutation(blocks)
    per = max(1, per_batch // BLOCK)
    out = []
    for i in range(0, blocks, per):
        picked = order[i:i + per]
        index = (picked[:, None] * BLOCK + np.arange(BLOCK)).ravel()
        out.append(index[index < rows])
    return out


def make_fitter(job: ConceptJob, channels: int, per_batch: int, total: int):
    s = job.settings
    if s.method == "nmf":
        return NmfFit(s.k, channels, s.seed, per_batch, total)
    return SaeFit(s.k, channels, s.sparsity, s.seed)


#: a batch's work (samples x channels x concepts) below which torch fits on one thread: small steps on
#: several threads of a busy CPU wait on each other (3 ms a step on one, 70 ms on two, on a loaded 2-core machine)
ONE_THREAD_BELOW = 2**22


@contextlib.contextmanager
def threads_for(work: int):
    """torch and the BLAS under numpy (scikit-learn's NMF) on one thread for the block where `work` is small."""
    before = torch.get_num_threads()
    small = work < ONE_THREAD_BELOW
    if small and before > 1:
        torch.set_num_threads(1)
    try:
        with _blas_threads(1 if small else None):
            yield
    finally:
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)


def _blas_threads(limit: int | None):
    if limit is None:
        return contextlib.nullcontext()
    try:
        from threadpoolctl import threadpool_limits  # scikit-learn's own dependency
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=limit, user_api="blas")


def run_fit(job: ConceptJob, state: State, cache: SampleCache, progress, cancel):
    """The fitter after every epoch (resumed from the state where it holds a fit)."""
    with threads_for(batch_rows(job, state.info["channels"]) * state.info["channels"] * job.settings.k):
        return _run_fit(job, state, cache, progress, cancel)


def _run_fit(job: ConceptJob, state: State, cache: SampleCache, progress, cancel):
    channels = state.info["channels"]
    rows = listing_rows(state, job, "train")
    if rows.size < job.settings.k and job.settings.method == "nmf":
        raise_small(job, rows.size)
    per_batch = batch_rows(job, channels)
    fitter = make_fitter(job, channels, per_batch, rows.size)
    fitter.load(state.fit)
    state.info["phase"] = "fit"
    state.info["batch_rows"] = per_batch
    data = cache.reader("train")
    plans = [epoch_batches(rows.size, per_batch, job.settings.seed, e) for e in range(job.settings.epochs)]
    total = sum(len(p) for p in plans)
    at = int(state.info.get("step", 0))
    saved_at = time.monotonic()
    if progress:
        progress("fit", at, total)
    step = 0
    for plan in plans:
        for index in plan:
            if step < at:
                step += 1
                continue
            try:
                fitter.step(np.asarray(data[rows[index]]))
            except (ValueError, FloatingPointError, RuntimeError) as exc:  # scikit-learn's NaN / inf refusal
                raise_failed(step + 1, total, str(exc), resumed=state.resumed)
            step += 1
            state.info["step"] = step
            if progress:
                progress("fit", step, total)
            stop = cancel is not None and cancel()
            if stop or time.monotonic() - saved_at > CHECKPOINT_EVERY_S:
                state.fit = fitter.state()
                state.save()
                saved_at = time.monotonic()
            if stop:
                raise RunCancelled(f"Concepts cancelled after {step} of {total} fitting steps; run it again with the "
                                   f"same arguments to resume from there.")
    return fitter


def raise_small(job: ConceptJob, rows: int) -> None:
    from .dictionary import ConceptError

    raise ConceptError(f"--k {job.settings.k} is more than the {rows} samples of the training images; take a "
                       f"smaller K or more images.")


def raise_failed(step: int, total: int, why: str, resumed: bool) -> None:
    """ConceptError: the fit met values it cannot take (samples or a saved fit that are not finite)."""
    from .dictionary import ConceptError
    from .store import RESTART

    why = why.splitlines()[0] if why else "no reason given"
    raise ConceptError(f"The fit failed at step {step} of {total} ({why[:160]}): the layer's samples or the fit's "
                       f"values are not finite{'; it resumed a saved state: ' + RESTART if resumed else ''}.")
