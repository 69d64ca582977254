"""Per-capture statistics, reduced on the tensor's own device before anything is copied."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

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


@torch.no_grad()
def tensor_stats(tensor: torch.Tensor) -> TensorStats:
    """Statistics over the finite values; NaN and Inf are counted, not averaged in.

    Three passes on the tensor's device (std_mean, aminmax, count_nonzero); the L2 norm
    follows from them, and NaN/Inf are only counted when the mean shows there are some.
    """
    t = tensor.detach()
    shape, dtype = tuple(t.shape), str(t.dtype).removeprefix("torch.")
    n = t.numel()
    if n == 0:
        return TensorStats(shape, dtype, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0)
    if t.is_complex():
        t = t.abs()
    if t.dtype not in (torch.float32, torch.float64):
        t = t.float()
    t = t.reshape(-1)
    nan = inf = 0
    std, mean = torch.std_mean(t, correction=0)
    if not bool(torch.isfinite(mean) & torch.isfinite(std)):
        nan, inf = (int(v) for v in torch.stack([torch.isnan(t).sum(), torch.isinf(t).sum()]).tolist())
        t = t[torch.isfinite(t)]
        if t.numel() == 0:
            return TensorStats(shape, dtype, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, nan, inf)
        std, mean = torch.std_mean(t, correction=0)
    lo, hi = torch.aminmax(t)
    nonzero = torch.count_nonzero(t)
    values = torch.stack([mean.double(), std.double(), lo.double(), hi.double(), nonzero.double()]).tolist()
    mean_, std_, lo_, hi_, nonzero_ = values
    finite_n = t.numel()
    l2 = math.sqrt(max(finite_n * (std_ * std_ + mean_ * mean_), 0.0))
    zeros = (finite_n - nonzero_) / n
    return TensorStats(shape, dtype, mean_, std_, lo_, hi_, l2, zeros, nan, inf)
