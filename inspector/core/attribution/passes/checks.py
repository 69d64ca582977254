"""Checks that a shortcut of a job's passes gives what the plain passes give: the model has no hooks that a
shortcut would skip (`plain`), and two answers are the same to rounding (`same_outputs`). Occlusion's regions
(`core.occlusion_regions`) run only where both hold."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.modules import module as _module_hooks

_HOOKS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")
_GLOBAL_HOOKS = ("_global_forward_hooks", "_global_forward_pre_hooks", "_global_backward_hooks",
                 "_global_backward_pre_hooks")


def _hooked(m: nn.Module) -> bool:
    return any(getattr(m, name, None) for name in _HOOKS)


def _global_hooks() -> bool:
    return any(getattr(_module_hooks, name, None) for name in _GLOBAL_HOOKS)


def tensors_in(value):
    """Every tensor in a module's output (nested tuples, lists and dicts), in order."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from tensors_in(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from tensors_in(v)


def same_outputs(a, b) -> bool:
    """The same outputs to the rounding a shortcut brings: equal non-float tensors, floats within a relative L2 of
    1e4 times their dtype's epsilon, at most 0.05 (float32: 1.2e-3, float64: 2e-12, half types: 0.05; a shortcut
    that reads the wrong values is off by the size of the values)."""
    first, second = list(tensors_in(a)), list(tensors_in(b))
    if len(first) != len(second):
        return False
    for p, q in zip(first, second):
        if p.shape != q.shape or p.dtype != q.dtype:
            return False
        if not p.is_floating_point():
            if not torch.equal(p, q):
                return False
            continue
        tolerance = min(1e4 * torch.finfo(p.dtype).eps, 0.05)
        p, q = p.double(), q.double()
        if not bool(torch.isfinite(p).eq(torch.isfinite(q)).all()):
            return False
        p, q = torch.nan_to_num(p), torch.nan_to_num(q)
        if float((p - q).norm()) > tolerance * max(float(p.norm()), 1e-30):
            return False
    return True


def plain(module: nn.Module) -> bool:
    """No hook anywhere (a hook on a module around a convolution can read its output too) and no forward of
    any module replaced already (another block's patch)."""
    return not _global_hooks() and not any(_hooked(m) or "forward" in vars(m) for m in module.modules())
