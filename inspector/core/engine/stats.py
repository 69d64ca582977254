"""Per-capture statistics, reduced on the tensor's own device before anything is copied."""

from __future__ import annotations

import math

import torch

from ..records.stats import TensorStats  # noqa: F401  (re-exported: the record this module fills)


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
    nothing).
    """
    t = tensor.detach()
    if t.dtype not in (torch.float32, torch.float64):
        if t.is_complex():
            t = t.abs()
        elif t.is_floating_point() or t.device.type == "mps":  # (MPS has no float64)
            t = t.float()
        else:  # integers above 2^24 are not exact in float32
            t = t.double()
    flat = flat_elements(t)
    nonzero = torch.count_nonzero(flat.bool())
    if t.device.type != "mps":  # a float64 row keeps counts above 2^24 exact (MPS has no float64)
        nonzero = nonzero.double()
    return torch.stack([flat.sum(), torch.dot(flat, flat), flat.amin(), flat.amax(), nonzero])


def from_moments(tensor: torch.Tensor, row: list[float], shape: tuple[int, ...] | None = None,
                 dtype: str | None = None) -> TensorStats:
    """Statistics from `moments`, or exact float64 ones over the finite values when the sums are
    not finite or cannot be trusted to ~1e-5. `shape`, `dtype`: what to report when `tensor` is
    a (converted) copy of the captured tensor."""
    shape = tuple(tensor.shape) if shape is None else shape
    dtype = dtype_name(tensor) if dtype is None else dtype
    n = tensor.numel()
    total, squares, lo, hi, nonzero = row
    mean = total / n
    var = max(squares / n - mean * mean, 0.0)
    # E[x^2] - mean^2 multiplies the float32 rounding of the sums by ~mean^2 / var (a sigmoid
    # gate near 0.5 with std 1e-3 came out 2% off; |mean| = 30 std still 2.6e-4): past
    # |mean| = 10 std the exact path takes over. Values below ~1e-19 have float32 squares in
    # the denormal range (or zero), which keep few digits.
    trusted = (var > 1e-2 * mean * mean and max(abs(lo), abs(hi)) > 1e-15) or nonzero == 0  # all zeros is exact
    if all(math.isfinite(v) for v in (total, squares, lo, hi)) and trusted:
        return TensorStats(shape, dtype, mean, math.sqrt(var), lo, hi, math.sqrt(squares), (n - nonzero) / n, 0, 0)
    t = tensor.detach()
    if t.device.type == "mps":  # the exact path works in float64, which MPS does not have
        t = t.cpu()
    return _exact_stats(t.abs() if t.is_complex() else t, shape, dtype)


def tensor_stats(tensor: torch.Tensor) -> TensorStats:
    """Statistics over the finite values; NaN and Inf are counted, not averaged in."""
    if tensor.numel() == 0:
        return _empty_stats(tuple(tensor.shape), dtype_name(tensor))
    return from_moments(tensor, moments(tensor).tolist())


def dtype_name(tensor: torch.Tensor) -> str:
    return str(tensor.dtype).removeprefix("torch.")


def _empty_stats(shape: tuple[int, ...], dtype: str) -> TensorStats:
    return TensorStats(shape, dtype, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0)


class StatsBatch:
    """Statistics for the captures of one run, reduced when each is taken (while its data is
    still in cache) and brought to the host together at the end: one transfer per device
    instead of one per capture.

    Reductions are not shared between captures of the same memory: a write through `.data` or
    a custom kernel changes memory without a version bump, so "same memory, same version" does
    not prove "same values"."""

    def __init__(self) -> None:
        self._rows: list[torch.Tensor] = []
        # name -> (shape, dtype name, the values at capture time, row or -1 when empty)
        self._pending: dict[str, tuple[tuple[int, ...], str, torch.Tensor, int]] = {}

    def add(self, name: str, tensor: torch.Tensor, values: torch.Tensor | None = None,
            dtype: str | None = None) -> None:
        """`values`: the capture's values when `tensor` may change later (a copy was kept);
        None when the capture shares `tensor`'s memory. Only `values` is held, so a copied
        tensor (a GPU activation) can be freed before the run ends. `dtype`: the name to report
        when `tensor` is a converted copy (a bfloat16 capture kept as float32)."""
        t = tensor.detach()
        row = -1
        if t.numel():
            row = len(self._rows)
            self._rows.append(moments(t))
        dtype = dtype_name(t) if dtype is None else dtype
        self._pending[name] = (tuple(t.shape), dtype, t if values is None else values, row)

    def keep_values(self, name: str, values: torch.Tensor) -> None:
        """A shared capture was copied before the model changes it: its values live there now."""
        if name in self._pending:
            shape, dtype, _values, row = self._pending[name]
            self._pending[name] = (shape, dtype, values, row)

    def resolve(self) -> dict[str, TensorStats]:
        rows: list[list[float] | None] = [None] * len(self._rows)
        by_device: dict[torch.device, list[int]] = {}
        for i, r in enumerate(self._rows):  # a model split over devices, or a CPU tensor among GPU ones
            by_device.setdefault(r.device, []).append(i)
        for indices in by_device.values():
            for i, values in zip(indices, torch.stack([self._rows[i] for i in indices]).tolist()):
                rows[i] = values
        out = {name: _empty_stats(shape, dtype) if row < 0 else from_moments(values, rows[row], shape, dtype)
               for name, (shape, dtype, values, row) in self._pending.items()}
        self._rows.clear()
        self._pending.clear()
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
