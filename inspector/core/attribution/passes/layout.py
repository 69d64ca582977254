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
  batch of each kind (with gradients, without): a model that cannot take it (a `.view` of an activation
  or of a gradient, say) runs that batch again NCHW and NCHW from then on; one that fails NCHW too
  raises its own error, and running out of memory is no answer about the layout. torchvision's detectors
  (their transform copies the images into a batch of its own) stay NCHW.

On other devices both are off: they were measured on a CPU only.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import weakref

import torch
from torch import nn
from torch.autograd.function import once_differentiable

PLAIN_NORMS = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)
_CPU_OUT_OF_MEMORY = "can't allocate memory"  # what torch's CPU allocator says when it fails
#: per module: {with gradients?: True where its batches run channels-last, False where they cannot}
_CHANNELS_LAST: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class ThreadSwitch:
    """A speed-up's switch: on, except in this thread while in `off()`'s block (what a bench measures the
    speed-up against)."""

    def __init__(self) -> None:
        self._local = threading.local()

    @property
    def on(self) -> bool:
        return not getattr(self._local, "off", False)

    @contextlib.contextmanager
    def off(self):
        before = getattr(self._local, "off", False)
        self._local.off = True
        try:
            yield
        finally:
            self._local.off = before


def on_cpu(module: nn.Module) -> bool:
    return all(t.device.type == "cpu" for t in itertools.chain(module.parameters(), module.buffers()))


class _EvalNorm(torch.autograd.Function):
    """BatchNorm with running statistics: the kernel's forward, and a backward of one multiply (worked out
    in float32 at least, as the kernel does for half precision)."""

    @staticmethod
    def forward(ctx, x, mean, var, weight, bias, eps):
        wide = torch.promote_types(var.dtype, torch.float32)
        scale = 1.0 / torch.sqrt(var.to(wide) + eps)  # as the kernel's backward: invstd, times the weight
        ctx.save_for_backward(scale if weight is None else scale * weight.to(wide))
        return torch.nn.functional.batch_norm(x, mean, var, weight, bias, False, 0.0, eps)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        (scale,) = ctx.saved_tensors
        found = grad.to(scale.dtype) * scale.reshape((1, -1) + (1,) * (grad.ndim - 2))
        return found.to(grad.dtype), None, None, None, None, None


class _NormForward:
    """A module's `forward` while patched: `_EvalNorm` where a gradient passes, else the module's own."""

    def __init__(self, module: nn.Module) -> None:
        self.module = module

    def __call__(self, *args, **kwargs) -> torch.Tensor:
        m = self.module
        x = args[0] if args else kwargs.get("input")
        if (m.training or m.running_var is None or len(args) + len(kwargs) != 1 or not isinstance(x, torch.Tensor)
                or not (torch.is_grad_enabled() and x.requires_grad)):
            return type(m).forward(m, *args, **kwargs)
        m._check_input_dim(x)
        detached = [None if t is None else t.detach() for t in (m.weight, m.bias)]
        return _EvalNorm.apply(x, m.running_mean, m.running_var, *detached, m.eps)


@contextlib.contextmanager
def eval_norms(module: nn.Module):
    """Patch every eval-mode BatchNorm of `module` (on a CPU) while in the block; hooks stay as they were.
    Only for passes that ask for the input's gradient: a patched BatchNorm's weight and bias get none."""
    patched = []
    try:
        if on_cpu(module):
            for m in module.modules():
                if type(m) in PLAIN_NORMS and "forward" not in vars(m):  # a subclass may have its own forward
                    m.forward = _NormForward(m)
                    patched.append(m)
        yield
    finally:
        for m in patched:
            if isinstance(vars(m).get("forward"), _NormForward):
                del m.forward


def _remembered(module: nn.Module) -> dict:
    try:
        return _CHANNELS_LAST.setdefault(module, {})
    except TypeError:  # a module that cannot be a weak dictionary's key (its own __eq__): tried each job
        return {}


class Layout:
    """The memory format a job's batches of `module` run in: channels-last on a CPU where the module takes
    it, tried on the first batch of its kind (with gradients or without: a backward can fail where the
    forward did not) once per module and remembered, else NCHW."""

    def __init__(self, module: nn.Module, grad: bool) -> None:
        self.module, self.grad = module, grad
        self.memory = _remembered(module)
        if not on_cpu(module):
            self.channels_last = False
            return
        if "model" not in self.memory:
            kinds = [type(m) for m in module.modules()]
            if any(kind.__name__ == "GeneralizedRCNNTransform" for kind in kinds):
                self.memory["model"] = False  # torchvision's detectors copy the images into a batch of their own
            elif sum(issubclass(kind, nn.Conv2d) for kind in kinds) < 2:
                self.memory["model"] = False  # a transformer's patch embedding alone: nothing to gain
            else:
                self.memory["model"] = True
        self.channels_last = self.memory.get(grad) if self.memory["model"] else False  # None: not tried yet

    def run(self, fn, batch: torch.Tensor):
        """fn(batch), the batch in the job's memory format (the same values)."""
        if self.channels_last is False or batch.ndim != 4:
            return fn(batch)
        if self.channels_last:
            return fn(batch.contiguous(memory_format=torch.channels_last))
        try:
            found = fn(batch.contiguous(memory_format=torch.channels_last))
        except torch.OutOfMemoryError:
            raise
        except RuntimeError as exc:  # e.g. `.view` of an activation that is no longer contiguous
            if _CPU_OUT_OF_MEMORY in str(exc):  # the CPU's allocator raises a plain RuntimeError
                raise
            found = None
        else:
            self.memory[self.grad] = self.channels_last = True
            return found
        found = fn(batch)  # a model that fails in NCHW too raises its own error here, and nothing is remembered
        self.memory[self.grad] = self.channels_last = False
        return found
