"""Per-capture statistics, reduced on the tensor's own device before anything is copied."""

from __future__ import annotations

import math
import weakref
from dataclasses import asdict, dataclass
from typing import Callable

import torch


@dataclass(frozen=True)
class TensorStats:
    shape: tuple[int, ...]
    dtype: str
    mean: float
    std: float
    min: float
    max: float
    l2: float
    zero_fraction: float
    nan: int
    inf: int

    def to_dict(self) -> dict:
        return asdict(self)


def flat_elements(t: torch.Tensor) -> torch.Tensor:
    """The tensor's elements as a 1-D tensor, without a copy when they fill their memory span
    exactly: contiguous, or a permutation of a contiguous layout (channels-last, ConvNeXt's
    Permute). Statistics do not depend on the order of the elements."""
    if t.is_contiguous():
        return t.view(-1)
    expected = 1
    for stride, size in sorted((st, sz) for st, sz in zip(t.stride(), t.shape) if sz != 1):
        if stride != expected:
            return t.reshape(-1)  # a slice or a broadcast: copy
        expected *= size
    return t.as_strided((t.numel(),), (1,), t.storage_offset())


def moments(tensor: torch.Tensor) -> torch.Tensor:
    """[sum, sum of squares, min, max, count of non-zeros] on the tensor's own device.

    Five cheap vectorised reductions; `std_mean` and `count_nonzero` on floats are ~100x
    slower on CPU, and `aminmax` is slower than amin + amax. Nothing is copied to the host
    here, so a batch of captures costs one transfer (`StatsBatch`). Per-call overhead
    matters (a run has hundreds of captures): no grad-mode switch (detached tensors record
    nothing), and `stack` promotes the integer count itself.
    """
    t = tensor.detach()
    if t.dtype not in (torch.float32, torch.float64):
        t = t.abs() if t.is_complex() else t.float()
    flat = flat_elements(t)
    return torch.stack([flat.sum(), torch.dot(flat, flat), flat.amin(), flat.amax(), torch.count_nonzero(flat.bool())])


def from_moments(tensor: torch.Tensor, row: list[float], like: torch.Tensor | None = None) -> TensorStats:
    """Statistics from `moments`, or exact float64 ones over the finite values when the sums are
    not finite or the variance is too small to trust from them. `like`: the tensor whose shape
    and dtype to report, when `tensor` is a (converted) copy of it."""
    like = tensor if like is None else like
    shape, dtype = tuple(like.shape), str(like.dtype).removeprefix("torch.")
    n = tensor.numel()
    total, squares, lo, hi, nonzero = row
    mean = total / n
    var = max(squares / n - mean * mean, 0.0)
    # E[x^2] - mean^2 loses float32 digits as mean^2 / var grows (a sigmoid gate near 0.5 with
    # std 1e-3 came out 2% off at 4e-6); past |mean| ~ 30 std the exact path takes over.
    # Values below ~1e-19 have float32 squares in the denormal range (or zero), which keep few digits.
    trusted = (var > 1e-3 * mean * mean and max(abs(lo), abs(hi)) > 1e-15) or nonzero == 0  # all zeros is exact
    if all(math.isfinite(v) for v in (total, squares, lo, hi)) and trusted:
        return TensorStats(shape, dtype, mean, math.sqrt(var), lo, hi, math.sqrt(squares), (n - nonzero) / n, 0, 0)
    t = tensor.detach()
    if t.device.type == "mps":  # the exact path works in float64, which MPS does not have
        t = t.cpu()
    return _exact_stats(t.abs() if t.is_complex() else t, shape, dtype)


def tensor_stats(tensor: torch.Tensor) -> TensorStats:
    """Statistics over the finite values; NaN and Inf are counted, not averaged in."""
    if tensor.numel() == 0:
        return _empty(tensor)
    return from_moments(tensor, moments(tensor).tolist())


def _empty(tensor: torch.Tensor) -> TensorStats:
    return TensorStats(tuple(tensor.shape), str(tensor.dtype).removeprefix("torch."), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0)


class StatsBatch:
    """Statistics for the captures of one run, reduced when each is taken (while its data is
    still in cache) and brought to the host together at the end: one transfer instead of one
    per capture. A capture whose elements are the same memory, unchanged, as an earlier one's
    (a Permute's output and its input, a view handed on) reuses its reductions."""

    def __init__(self) -> None:
        self._rows: list[torch.Tensor] = []
        # name -> (the captured tensor, for shape and dtype; its values at capture time; row)
        self._pending: dict[str, tuple[torch.Tensor, torch.Tensor, int]] = {}
        self._seen: dict[tuple, tuple[int, Callable[[], torch.Tensor | None]]] = {}

    def add(self, name: str, tensor: torch.Tensor, values: torch.Tensor | None = None) -> None:
        """`values`: the capture's values when `tensor` may change later (a copy was kept);
        None when the capture shares `tensor`'s memory, which keeps that memory alive."""
        t = tensor.detach()
        if t.numel() == 0:
            self._pending[name] = (t, t, -1)
            return
        flat = flat_elements(t)
        # The same elements: same memory, same size, unchanged. Valid only while that memory
        # cannot have been freed and reused: held here for a shared capture; for a copied one,
        # only while the caller's tensor is still alive.
        dense = flat.is_contiguous() and flat.data_ptr() == t.data_ptr()  # not a copy, no gaps (x[::2])
        same = (t.device, t.dtype, flat.data_ptr(), flat.numel(), t._version) if dense else None
        row, alive = self._seen.get(same, (None, None)) if same else (None, None)
        if row is None or alive() is None:
            row = len(self._rows)
            self._rows.append(moments(flat))
            if same:
                self._seen[same] = (row, (lambda held=t: held) if values is None else weakref.ref(tensor))
        self._pending[name] = (t, t if values is None else values, row)

    def keep_values(self, name: str, values: torch.Tensor) -> None:
        """A shared capture was copied before the model changes it: its values live there now."""
        t, _values, row = self._pending[name]
        self._pending[name] = (t, values, row)

    def resolve(self) -> dict[str, TensorStats]:
        rows = torch.stack(self._rows).tolist() if self._rows else []
        out = {name: _empty(t) if row < 0 else from_moments(values, rows[row], like=t)
               for name, (t, values, row) in self._pending.items()}
        self._rows.clear()
        self._pending.clear()
        self._seen.clear()
        return out


def _exact_stats(t: torch.Tensor, shape: tuple[int, ...], dtype: str) -> TensorStats:
    t = t.reshape(-1)
    n = t.numel()
    nan, inf = (int(v) for v in torch.stack([torch.isnan(t).sum(), torch.isinf(t).sum()]).tolist())
    finite = t[torch.isfinite(t)].double() if nan or inf else t.double()
    if finite.numel() == 0:
        return TensorStats(shape, dtype, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, nan, inf)
    std, mean = torch.std_mean(finite, correction=0)
    lo, hi = torch.aminmax(finite)
    l2 = torch.linalg.vector_norm(finite)
    nonzero = torch.count_nonzero(finite)
    mean_, std_, lo_, hi_, l2_, nonzero_ = torch.stack([mean, std, lo, hi, l2, nonzero.double()]).tolist()
    zeros = (finite.numel() - nonzero_) / n
    return TensorStats(shape, dtype, mean_, std_, lo_, hi_, l2_, zeros, nan, inf)
