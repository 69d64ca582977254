"""Per-capture statistics, reduced on the tensor's own device before anything is copied."""

from __future__ import annotations

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
    """Statistics over the finite values; NaN and Inf are counted, not averaged in."""
    t = tensor.detach()
    shape, dtype = tuple(t.shape), str(t.dtype).removeprefix("torch.")
    n = t.numel()
    if n == 0:
        return TensorStats(shape, dtype, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0)
    if t.dtype == torch.bool or not (t.is_floating_point() or t.is_complex()):
        t = t.float()
    if t.is_complex():
        t = t.abs()
    t = t.reshape(-1)
    if t.dtype in (torch.float16, torch.bfloat16):
        t = t.float()
    nan = torch.isnan(t).sum()
    inf = torch.isinf(t).sum()
    bad = int(nan + inf) if t.is_floating_point() else 0
    finite = t if bad == 0 else t[torch.isfinite(t)]
    if finite.numel() == 0:
        values = torch.zeros(6, device=t.device)
    else:
        std, mean = torch.std_mean(finite, correction=0)
        lo, hi = torch.aminmax(finite)
        norm = torch.linalg.vector_norm(finite)
        zeros = (finite == 0).sum() / n
        values = torch.stack([mean, std, lo, hi, norm, zeros.to(mean.dtype)])
    counts = torch.stack([nan, inf]).tolist()
    mean, std, lo, hi, norm, zeros = values.double().tolist()
    return TensorStats(shape, dtype, mean, std, lo, hi, norm, zeros, int(counts[0]), int(counts[1]))
