"""What a values run does with each tensor a node makes, as it is made (`Recorder.watch`): its statistics reduced
on its own device (brought to the host together at the end), a tensor hook for its gradient's L2, and, for a
comparison of two runs, a copy kept (the first run) or the relative difference to that copy (the second run).

Keys are (node id, index) as the recorder numbers its nodes while it runs; `run` maps them to the graph's ids.
A node whose tensor is made twice (an edit hook's result stands for it: `EditBridge`) keeps the last one, for its
values, its gradient and its copy alike.
"""

from __future__ import annotations

import math
import threading

import torch

from ...engine.stats import flat_elements
from ...common.errors import MismatchError, RunCancelled

Key = tuple[str, "int | None"]

#: Why a forward with edits may go another way than the graph's.
EDITED_PATH = ("an edit can send the forward another way (an edit of an attention module's input gives it three "
               "tensors where it had one, and it projects them apart)")


def _real(t: torch.Tensor) -> torch.Tensor:
    """`t` detached, as float32 or float64 values (a complex tensor's magnitudes, integers as float64)."""
    t = t.detach()
    if t.is_complex():
        t = t.abs()
    if t.dtype not in (torch.float32, torch.float64):
        t = t.float() if t.is_floating_point() else t.double()
    return t


def _as_real(t: torch.Tensor) -> torch.Tensor:
    return flat_elements(_real(t))


def stat_row(t: torch.Tensor) -> list[float] | torch.Tensor:
    """[sum |x|, sum x^2 (both over the finite values), non-zero finite values, NaN, Inf] of `t`: a list at once on
    the CPU when every value is finite (three reductions: reading a CPU sum costs nothing), a tensor on `t`'s
    device otherwise (read later with the others: a GPU waits once per run)."""
    flat = _as_real(t)
    if flat.device.type == "cpu":
        absolute, squares = float(flat.abs().sum()), float(torch.dot(flat, flat))
        if math.isfinite(absolute) and math.isfinite(squares):
            return [absolute, squares, float(torch.count_nonzero(flat.bool())), 0.0, 0.0]
    a = flat.abs()
    nan, inf = a.isnan().sum(), a.isinf().sum()
    a = torch.nan_to_num(a, nan=0.0, posinf=0.0)
    return torch.stack([a.sum().double(), torch.dot(a, a).double(), torch.count_nonzero(a.bool()).double(),
                        nan.double(), inf.double()])


def read_rows(rows: dict[Key, list[float] | torch.Tensor]) -> dict[Key, list[float]]:
    """The rows as numbers: those still on a device brought over in one transfer per device."""
    out = {k: r for k, r in rows.items() if isinstance(r, list)}
    by_device: dict[torch.device, list[Key]] = {}
    for k, r in rows.items():
        if not isinstance(r, list):
            by_device.setdefault(r.device, []).append(k)
    for keys in by_device.values():
        for k, values in zip(keys, torch.stack([rows[k].reshape(-1) for k in keys]).tolist()):
            out[k] = values
    return out


class Watch:
    """Told every tensor a node makes (`__call__`). `stats`, `grads`: reduce its values, hook its gradient.
    `keep`: keep a CPU copy of the tensors of these keys (None: every key) while `budget` bytes allow, the
    others listed in `left` in the order they ran (at least one is kept, however large). `against`: copies
    from an earlier run, compared with as each tensor is made (`diffs`: key -> [||b - a||^2, ||a||^2])."""

    def __init__(self, *, stats: bool = True, grads: bool = True, keep: set[Key] | None | bool = False,
                 budget: int = 0, against: dict[Key, torch.Tensor] | None = None,
                 cancel: threading.Event | None = None) -> None:
        self.stats, self.grads, self.cancel = stats, grads, cancel
        self.keep, self.budget, self.against = keep, budget, against
        self.rows: dict[Key, list[float] | torch.Tensor] = {}
        self.counts: dict[Key, int] = {}
        self.grad_sq: dict[Key, torch.Tensor] = {}
        self.kept: dict[Key, torch.Tensor] = {}
        self.left: dict[Key, None] = {}  # an ordered set
        self.diffs: dict[Key, torch.Tensor] = {}
        self._used = 0
        self._seq: dict[Key, int] = {}

    def __call__(self, node: str, index: int | None, t: torch.Tensor) -> None:
        key = (node, index)
        if self.stats:
            self.counts[key] = t.numel()
            self.rows[key] = stat_row(t) if t.numel() else [0.0] * 5
        if self.grads and t.requires_grad:
            n = self._seq[key] = self._seq.get(key, 0) + 1
            t.register_hook(self._grad_hook(key, n))
        if self.keep is not False and (self.keep is None or key in self.keep):
            self._keep(key, t)
        if self.against is not None and key in self.against:
            self.diffs[key] = _difference(node, t, self.against[key])

    def _keep(self, key: Key, t: torch.Tensor) -> None:
        size = t.numel() * t.element_size()
        old = self.kept.pop(key, None)
        if old is not None:
            self._used -= old.numel() * old.element_size()
        if old is not None or not self.kept or self._used + size <= self.budget:
            self.kept[key] = t.detach().to("cpu", copy=True)
            self._used += size
        else:
            self.left[key] = None

    def _grad_hook(self, key: Key, n: int):
        def hook(grad: torch.Tensor):
            if self.cancel is not None and self.cancel.is_set():
                raise RunCancelled()
            if self._seq.get(key) == n:  # the last tensor made for this key
                g = _as_real(grad)
                self.grad_sq[key] = torch.dot(g, g).double()
            return None

        return hook


def _difference(node: str, t: torch.Tensor, base: torch.Tensor) -> torch.Tensor:
    """[||t - base||^2, ||base||^2] on `t`'s device."""
    if tuple(t.shape) != tuple(base.shape):
        raise MismatchError(f"{node} made a tensor of shape {tuple(base.shape)} in the first run and "
                            f"{tuple(t.shape)} in the second: the two runs differ there, not only in their values: another "
                            f"architecture, or {EDITED_PATH}.")
    b = _real(base.to(t.device, non_blocking=True))
    d = flat_elements(_real(t) - b)
    b = flat_elements(b)
    return torch.stack([torch.dot(d, d).double(), torch.dot(b, b).double()])
