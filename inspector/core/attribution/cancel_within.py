"""Cancel within one module call, forward or backward, for the methods that run in passes: `each_pass` asks
`cancel()` only between passes, and one pass of a big batch on a big model takes seconds (resnet50, 16 copies
for integrated gradients: 2-6 s on a loaded 2-core machine), which is how long Esc used to wait. Here every
module asks before it runs, and each leaf module's output asks as its gradient arrives. The checks only read
a flag: no value changes, and the hooks go when the context ends, however it ends. TorchScript modules take
no hooks: theirs stops between passes, as before."""

from __future__ import annotations

import contextlib
import itertools

import torch
from torch import nn

from ..common.errors import RunCancelled
from ..common.hooks import together
from .passes.checks import tensors_in


@contextlib.contextmanager
def stops_within_a_module(model: nn.Module, cancel, what: str):
    """While inside, `cancel()` True raises RunCancelled("WHAT cancelled.") at the next module call or at the next
    leaf module's gradient (`cancel` None: nothing is added)."""
    if cancel is None:
        yield
        return
    message = f"{what} cancelled."

    def check() -> None:
        if cancel():
            raise RunCancelled(message)

    def before(_module, _args) -> None:
        check()

    def on_gradient(_grad) -> None:
        check()

    def after(_module, _args, output) -> None:
        if torch.is_grad_enabled():
            for tensor in tensors_in(output):
                if tensor.requires_grad:
                    tensor.register_hook(on_gradient)

    hookable = [m for m in model.modules() if not isinstance(m, torch.jit.ScriptModule)]  # they take no hooks
    befores = (module.register_forward_pre_hook(before) for module in hookable)
    afters = (module.register_forward_hook(after) for module in hookable if next(module.children(), None) is None)
    with together(itertools.chain(befores, afters)):
        yield
