"""Faster passes over a job's batches of copies on a CPU (integrated gradients' path points, SmoothGrad's
noisy copies, occlusion's occluded copies, the deletion and insertion images), with the same numbers:

- `eval_norms(module)`: while in the block, an eval-mode BatchNorm that a gradient passes through runs its
  own forward kernel and, backward, one multiply by weight / sqrt(var + eps) per channel: the kernel's
  general backward reads and writes more (resnet50, 2 threads, batch 8: forward + backward 0.79-0.86x).
  The gradient is the kernel's to float32 rounding (bit for bit on resnet50); weight and bias get none
  (these passes ask for the input's).
- `Layout`: 4-D image batches go in channels-last memory format, where oneDNN's convolutions need no
  reorder to and from their blocked layout (forward + backward 0.76-0.85x on resnet50, 0.73-0.86x on
  efficientnet_b0, mobilenet_v3_large and densenet121; forward 0.81-0.97x; ConvNeXt unchanged; a model
  with fewer than two convolutions, a ViT's patch embedding, is left NCHW: vit_b_16 gained nothing).
  Both together: forward + backward 0.72-0.78x on resnet50, 0.64-0.76x on the other three.
  Its convolutions add in another order: float32 rounding, resnet50's input gradient moves by relL2
  4e-3 from the NCHW one, which is itself 3e-3 from float64's. The layout is tried on a model's first
  batch: a model that cannot take it (a `.view` of an activation, say) runs NCHW from then on, and
  torchvision's detectors (their transform copies the images into a batch of its own) stay NCHW.

On other devices both are off: they were measured on a CPU only.
"""

from __future__ import annotations

import contextlib
import weakref

import torch
from torch import nn
from torch.autograd.function import once_differentiable

_PLAIN_NORMS = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)
#: per module: True where its batches run channels-last, False where they cannot (tried once)
_CHANNELS_LAST: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _on_cpu(module: nn.Module) -> bool:
    return all(p.device.type == "cpu" for p in module.parameters())


class _EvalNorm(torch.autograd.Function):
    """BatchNorm with running statistics: the kernel's forward, and a backward of one multiply."""

    @staticmethod
    def forward(ctx, x, mean, var, weight, bias, eps):
        scale = 1.0 / torch.sqrt(var + eps)  # as the kernel's backward: invstd, times the weight
        ctx.save_for_backward(scale if weight is None else scale * weight)
        return torch.nn.functional.batch_norm(x, mean, var, weight, bias, False, 0.0, eps)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        (scale,) = ctx.saved_tensors
        return grad * scale.reshape((1, -1) + (1,) * (grad.ndim - 2)), None, None, None, None, None


class _NormForward:
    """A module's `forward` while patched: `_EvalNorm` where a gradient passes, else the module's own."""

    def __init__(self, module: nn.Module) -> None:
        self.module = module

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        m = self.module
        if m.training or not (torch.is_grad_enabled() and x.requires_grad) or m.running_var is None:
            return type(m).forward(m, x)
        m._check_input_dim(x)
        detached = [None if t is None else t.detach() for t in (m.weight, m.bias)]
        return _EvalNorm.apply(x, m.running_mean, m.running_var, *detached, m.eps)


@contextlib.contextmanager
def eval_norms(module: nn.Module):
    """Patch every eval-mode BatchNorm of `module` (on a CPU) while in the block; hooks stay as they were."""
    patched = []
    if _on_cpu(module):
        for m in module.modules():
            if type(m) in _PLAIN_NORMS and "forward" not in vars(m):  # a subclass may have its own forward
                m.forward = _NormForward(m)
                patched.append(m)
    try:
        yield
    finally:
        for m in patched:
            if isinstance(vars(m).get("forward"), _NormForward):
                del m.forward


class Layout:
    """The memory format a job's batches of `module` run in: channels-last on a CPU where the module takes
    it, tried on the job's first batch (once per module, remembered), else NCHW."""

    def __init__(self, module: nn.Module) -> None:
        self.module = module
        if module not in _CHANNELS_LAST:
            kinds = [type(m) for m in module.modules()]
            if any(kind.__name__ == "GeneralizedRCNNTransform" for kind in kinds):
                _CHANNELS_LAST[module] = False  # torchvision's detectors copy the images into a batch of their own
            elif sum(issubclass(kind, nn.Conv2d) for kind in kinds) < 2:
                _CHANNELS_LAST[module] = False  # a transformer's patch embedding alone: nothing to gain
        self.channels_last = _CHANNELS_LAST.get(module) if _on_cpu(module) else False  # None: not tried yet

    def run(self, fn, batch: torch.Tensor):
        """fn(batch), the batch in the job's memory format (the same values)."""
        if self.channels_last is False or batch.ndim != 4:
            return fn(batch)
        if self.channels_last:
            return fn(batch.contiguous(memory_format=torch.channels_last))
        try:
            found = fn(batch.contiguous(memory_format=torch.channels_last))
        except RuntimeError:  # e.g. `.view` of an activation that is no longer contiguous: NCHW from now on
            _CHANNELS_LAST[self.module] = self.channels_last = False
            return fn(batch)
        _CHANNELS_LAST[self.module] = self.channels_last = True
        return found
