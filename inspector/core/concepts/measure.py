"""The fit measured on the held-out images' samples, against PCA with the same K fitted on the training samples
(their mean and covariance accumulated in float64, then `torch.linalg.eigh`): the fraction of variance each
explains (1 - residual / total sum of squares about the held-out mean), the sparsity (mean concepts active
per sample: coefficient above ACTIVE times the sample's largest), for NMF the relative reconstruction error
||X - CD||_F / ||X||_F, and the concepts never active. And each concept's top images: by its largest
coefficient over an image's positions, with that position (the atlas's LayerTop keeps them)."""

from __future__ import annotations

import numpy as np
import torch

from ..folder_jobs import LayerPartial, LayerTop
from .dictionary import Dictionary
from .fit import listing_rows
from .job import MB, ConceptJob
from .store import SampleCache, State

ACTIVE = 1e-6


def chunks(rows: np.ndarray, size: int):
    for i in range(0, rows.size, size):
        yield rows[i:i + size]


def pca(data: np.ndarray, rows: np.ndarray, k: int, size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(mean (C,), the top-k principal directions (C, k)) of the samples `rows`, float64."""
    c = data.shape[1]
    total = torch.zeros(c, dtype=torch.float64)
    outer = torch.zeros(c, c, dtype=torch.float64)
    for part in chunks(rows, size):
        x = torch.from_numpy(np.asarray(data[part], np.float64))
        total += x.sum(0)
        outer += x.T @ x
    n = max(rows.size, 1)
    mean = total / n
    cov = outer / n - torch.outer(mean, mean)
    _, vectors = torch.linalg.eigh(cov)
    return mean, vectors[:, -min(k, c):].flip(1)


def active(coef: torch.Tensor) -> torch.Tensor:
    return (coef > ACTIVE * coef.amax(1, keepdim=True)) & (coef > 0)


def measure(dictionary: Dictionary, job: ConceptJob, state: State, cache: SampleCache) -> dict:
    """The fit metrics (the record's "fit") and the per-concept counts of activity on the held-out samples."""
    channels, k = dictionary.channels, dictionary.k
    size = max(64, int(job.settings.max_memory_mb * MB) // (8 * 8 * max(channels, k)))
    train, held = listing_rows(state, job, "train"), listing_rows(state, job, "held")
    on = "held-out"
    held_data = cache.reader("held")
    if held.size == 0:  # --held-out 0: measured on what it learned from, and said so
        held, held_data, on = train, cache.reader("train"), "training (no held-out images)"
    mean, vectors = pca(cache.reader("train"), train, k, size)
    s = dict(n=0, sum=torch.zeros(channels, dtype=torch.float64), sq=0.0, rss=0.0, rss_pca=0.0, norm=0.0, active=0.0)
    per_concept = torch.zeros(k, dtype=torch.float64)
    for part in chunks(held, size):
        x = torch.from_numpy(np.asarray(held_data[part], np.float32))
        x64 = x.double()
        coef = dictionary.coefficients(x)
        rebuilt = dictionary.reconstruct(coef).double()
        centred = x64 - mean
        pca_rebuilt = centred @ vectors @ vectors.T
        on_mask = active(coef)
        s["n"] += x.shape[0]
        s["sum"] += x64.sum(0)
        s["sq"] += float((x64 ** 2).sum())
        s["rss"] += float(((x64 - rebuilt) ** 2).sum())
        s["rss_pca"] += float(((centred - pca_rebuilt) ** 2).sum())
        s["active"] += float(on_mask.sum())
        per_concept += on_mask.sum(0).double()
    n = max(s["n"], 1)
    tss = s["sq"] - float((s["sum"] ** 2).sum()) / n
    fit = {"measured_on": on, "samples": s["n"], "train_samples": int(train.size),
           "variance_explained": 1 - s["rss"] / tss if tss > 0 else None,
           "pca_variance_explained": 1 - s["rss_pca"] / tss if tss > 0 else None,
           "pca_k": int(vectors.shape[1]),
           "sparsity": s["active"] / n,
           "never_active": [int(i) for i in torch.nonzero(per_concept == 0).flatten()]}
    if dictionary.method == "nmf":
        fit["relative_error"] = (s["rss"] / s["sq"]) ** 0.5 if s["sq"] > 0 else 0.0
    fit["active_fraction"] = (per_concept / n).tolist()
    return fit


def top_images(dictionary: Dictionary, job: ConceptJob, state: State, cache: SampleCache, progress=None) -> LayerTop:
    """Each concept's top images (train and held-out alike) by its largest coefficient on the image, and the
    statistics of its coefficients over every position. `progress(done, total)`: images, after each group."""
    k = dictionary.k
    width = int(state.width.max()) or 1
    tops = LayerTop(k, job.settings.top, width)
    readers = {"train": cache.reader("train"), "held": cache.reader("held")}
    images = np.nonzero(state.done & (state.start >= 0))[0]
    per = max(1, int(job.settings.max_memory_mb * MB) // (8 * 8 * max(dictionary.channels, k) * max(
        int((state.height * state.width).max()), 1)))
    if progress:
        progress(0, images.size)
    for done, group in enumerate(chunks(images, per)):
        counts = [int(state.height[i] * state.width[i]) for i in group]
        parts = [np.asarray(readers["held" if job.held[i] else "train"][state.start[i]:state.start[i] + n])
                 for i, n in zip(group, counts)]
        coef = dictionary.coefficients(torch.from_numpy(np.concatenate(parts)))  # (rows, K), one solve per group
        scores, where = [], []
        for i, part in zip(group, coef.split(counts)):
            best, pos = part.max(0)
            y, x = pos // state.width[i], pos % state.width[i]  # the atlas's flat position on the widest map
            scores.append(best.numpy())
            where.append((y * width + x).numpy())
        c64 = coef.double()
        channel = np.tile(np.arange(k), len(group))
        tops.add(LayerPartial.from_sums(channel, np.repeat(group, k), np.concatenate(scores), np.concatenate(where),
                                        np.full(k, float(sum(counts))), c64.sum(0).numpy(), (c64 ** 2).sum(0).numpy(),
                                        (coef > 0).sum(0).numpy()))
        if progress:
            progress(min((done + 1) * per, images.size), images.size)
    return tops
