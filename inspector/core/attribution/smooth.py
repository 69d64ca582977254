"""SmoothGrad (Smilkov et al. 2017) over any map: the mean (`smoothgrad`), the mean of squares
(`smoothgrad-sq`) or the variance (`vargrad`) of a base method's map over `samples` inputs x + noise,
noise ~ N(0, sigma^2) with sigma = `noise` times (max - min) of the input, as in the paper; captum's
NoiseTunnel kinds. Seeded (the seed used is returned), accumulated in float64: with noise 0 every copy is
the input, so the map is worked out once and the smoothgrad of a map is that map exactly. The base method
is given as a function of the input (and, where it can take many copies in one pass, of a batch of them:
`many`, `batch` copies a pass, the same noise drawn in the same order), so this module knows no method.

The noise is drawn on the CPU, copy after copy from one generator (a seed gives the same noise on every
device), by a thread that runs ahead of the passes (`NoiseCopies`): on a GPU the drawing overlaps the model's
work instead of adding to it (resnet50 at 224 x 224 on an H200: drawing 25 copies took 17 ms, as long as
the one pass over them)."""

from __future__ import annotations

import queue
import secrets
import threading
from typing import Callable

import numpy as np
import torch

from ..common.errors import SpecError
from ..records.methods import SMOOTH_KINDS
from ..sources.seeds import check_seed
from .passes.batching import each_pass

AHEAD_BYTES = 256 * 2**20  # the noise drawn ahead of the passes, at most


def check_smoothing(kind: str, samples: int, noise: float) -> None:
    """One-line errors for a SmoothGrad kind, sample count or noise level that cannot be used."""
    if kind not in SMOOTH_KINDS:
        raise SpecError(f"Unknown SmoothGrad kind {kind!r}. Use one of: {', '.join(SMOOTH_KINDS)}.")
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise SpecError(f"samples must be a whole number of at least 1, not {samples!r}.")
    if not np.isfinite(noise) or noise < 0:
        raise SpecError(f"noise must be a fraction of the input's range, 0 or more, not {noise!r}.")


def fresh_seed(seed: int | None) -> int:
    """The seed a run uses: the one given (the range and message of every seed, `sources.seeds`), else a new one
    (returned with the map, to run it again)."""
    return secrets.randbelow(2**31) if seed is None else check_seed(seed, "The noise seed")


class NoiseCopies:
    """`total` N(0, 1) float32 copies of `shape`, drawn on the CPU in order from one generator seeded with
    `seed` (the copies `torch.randn(shape, generator=...)` gives one after another), by a thread that holds
    at most `ahead` bytes of them (AHEAD_BYTES; one copy at least) ahead of `take`. Close it (or use it as a
    context) to stop the thread."""

    def __init__(self, shape: tuple[int, ...], seed: int, total: int, ahead: int = AHEAD_BYTES) -> None:
        size = 4 * max(1, int(np.prod(shape)))
        self._queue: queue.Queue = queue.Queue(maxsize=max(1, min(total, ahead // size)))
        self._stop, self._error = threading.Event(), None
        self._thread = threading.Thread(target=self._draw, args=(tuple(shape), seed, total), daemon=True,
                                        name="smoothgrad-noise")
        self._thread.start()

    def _put(self, item) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def _draw(self, shape, seed, total) -> None:
        try:
            generator = torch.Generator(device="cpu").manual_seed(seed)
            for _ in range(total):
                if not self._put(torch.randn(shape, generator=generator, dtype=torch.float32)):
                    return
        except BaseException as exc:  # handed to `take`, raised there
            self._error = exc
            self._put(None)

    def take(self, count: int) -> torch.Tensor:
        """The next `count` copies, concatenated along the first dimension."""
        copies = []
        while len(copies) < count:
            try:
                item = self._queue.get(timeout=0.05)
            except queue.Empty:
                if self._stop.is_set() or not self._thread.is_alive():  # closed, or all `total` handed over
                    raise RuntimeError("No noise is left to take: the noise copies were closed or all taken.")
                continue
            if item is None:
                raise self._error
            copies.append(item)
        return torch.cat(copies)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()

    def __enter__(self) -> NoiseCopies:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def smooth(x: torch.Tensor, base: Callable[[torch.Tensor], np.ndarray], kind: str = "smoothgrad",
           samples: int = 25, noise: float = 0.15, seed: int | None = None, cancel=None,
           progress=None, many: Callable[[torch.Tensor], np.ndarray] | None = None,
           batch: int = 1, draws: NoiseCopies | None = None) -> tuple[np.ndarray, int, float]:
    """(the smoothed map, the seed used, sigma). `draws`: the noise, already being drawn with `seed` (else
    drawn here)."""
    check_smoothing(kind, samples, noise)
    seed = fresh_seed(seed)
    x = x.detach()
    sigma = float(noise) * float(x.max() - x.min())
    if sigma == 0:  # every copy is x: one map, exactly
        found = np.asarray(base(x), dtype=np.float64)
        if progress is not None:
            progress(samples, samples)
        mean, mean_sq = found, found * found
        result = {"smoothgrad": mean, "smoothgrad-sq": mean_sq, "vargrad": np.zeros_like(mean)}[kind]
        return result.astype(np.float32), seed, sigma
    owned = draws is None
    draws = NoiseCopies(tuple(x.shape), seed, samples) if owned else draws
    total = squares = None
    try:
        for part in each_pass(samples, batch if many is not None else 1, "SmoothGrad", cancel, progress):
            jitter = draws.take(part.stop - part.start)
            noisy = x + sigma * jitter.to(device=x.device, dtype=x.dtype)
            maps = np.asarray(many(noisy) if many is not None else base(noisy)[None], np.float64)
            for found in maps:
                total = found if total is None else total + found
                squares = found * found if squares is None else squares + found * found
    finally:
        if owned:
            draws.close()
    mean, mean_sq = total / samples, squares / samples
    result = {"smoothgrad": mean, "smoothgrad-sq": mean_sq, "vargrad": mean_sq - mean * mean}[kind]
    return result.astype(np.float32), seed, sigma
