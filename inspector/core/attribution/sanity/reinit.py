"""The layers a model-parameter randomisation re-initialises, in the order a forward pass reaches them, and
their seeded re-initialisation.

A layer is a module that owns parameters itself (`parameters(recurse=False)`): every conv, linear and norm
layer, and a container's own tensors too (a vision transformer's class token, its encoder's position
embedding, MultiheadAttention's input projection). Layers are ordered by when a forward pass first calls
them, recorded with forward pre-hooks on a copy; a layer whose forward is never called, because an ancestor
uses its tensors directly (MultiheadAttention's `out_proj`), takes its nearest called ancestor's place, just
after it; ties keep the model's own module order. The top of the model (the logits) is the last layer.

A layer is re-initialised with its own `reset_parameters()` where it is a leaf module that has one (torch's
default initialisation of that layer: BatchNorm's sets weight 1, bias 0 and resets its running statistics),
else each of its own parameters is drawn from N(0, s^2), s the parameter's own standard deviation (0.02 for
a constant or one-value parameter). The draws are made on a CPU copy of the layer under a seed made from the
run's seed and the layer's name, so a layer gets the same values on any device and in either mode.
"""

from __future__ import annotations

import copy
import zlib
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

#: How a layer was re-initialised, in words.
RESET, NORMAL = "reset_parameters", "normal"
_FLOOR_STD = 0.02  # a constant or one-value parameter (a class token of zeros) is drawn with this


@dataclass(frozen=True)
class Layer:
    """A module that owns parameters, by its path, and how it is re-initialised (RESET or NORMAL)."""

    name: str
    how: str


def owns_parameters(module: nn.Module) -> bool:
    return any(True for _ in module.parameters(recurse=False))


def forward_order(module: nn.Module, call) -> tuple[Layer, ...]:
    """The layers of `module` (see the module's docstring) in forward order, bottom (input) first; `call()`
    runs one forward of `module` (its hooks are removed after it, whatever it raises)."""
    names = {m: name for name, m in module.named_modules()}
    first: dict[str, int] = {}

    def seen(m, _inputs):
        first.setdefault(names.get(m, ""), len(first))

    handles = []
    try:
        for m in names:  # TorchScript takes no hooks: what runs inside it keeps the model's own order
            if not isinstance(m, torch.jit.ScriptModule):
                handles.append(m.register_forward_pre_hook(seen))
        with torch.no_grad():
            call()
    finally:
        for h in handles:
            h.remove()
    position = {name: i for i, name in enumerate(names.values())}

    def key(name: str) -> tuple[int, int]:
        parts = name.split(".") if name else []
        while ".".join(parts) not in first and parts:  # not called: its nearest called ancestor's place
            parts.pop()
        return first.get(".".join(parts), len(first)), position[name]

    owners = [name for m, name in names.items() if owns_parameters(m)]
    return tuple(Layer(name, _how(module.get_submodule(name))) for name in sorted(owners, key=key))


def _how(layer: nn.Module) -> str:
    leaf = not any(True for _ in layer.children())
    return RESET if leaf and callable(getattr(layer, "reset_parameters", None)) else NORMAL


def layer_seed(seed: int, name: str) -> int:
    """The seed layer `name` is drawn with in a run seeded `seed`: the same in cascading and independent mode."""
    return int(np.random.SeedSequence([seed, zlib.crc32(name.encode())]).generate_state(1)[0])


def own_state(layer: nn.Module) -> dict[str, torch.Tensor]:
    """A copy of the layer's own parameters and buffers (not its children's), to put back later."""
    own = dict(layer.named_parameters(recurse=False)) | dict(layer.named_buffers(recurse=False))
    return {k: v.detach().clone() for k, v in own.items() if v is not None}


def put_back(layer: nn.Module, state: dict[str, torch.Tensor]) -> None:
    """Copy `state` (own_state's) into the layer's own tensors, in place."""
    own = dict(layer.named_parameters(recurse=False)) | dict(layer.named_buffers(recurse=False))
    with torch.no_grad():
        for k, v in state.items():
            own[k].copy_(v)


def reinitialise(model: nn.Module, layer: Layer, seed: int) -> None:
    """Re-initialise `layer` of `model` in place, from `layer_seed(seed, layer.name)`."""
    target = model.get_submodule(layer.name)
    with torch.random.fork_rng(devices=[]):  # the caller's CPU random state is left as it was
        torch.manual_seed(layer_seed(seed, layer.name))
        fresh = _drawn(target, layer.how)
    put_back(target, fresh)


def _drawn(target: nn.Module, how: str) -> dict[str, torch.Tensor]:
    """The layer's new own tensors, drawn on the CPU from torch's (seeded) global generator."""
    if how == RESET:
        cpu = copy.deepcopy(target).to("cpu").float()  # drawn alike whatever the model's type
        cpu.reset_parameters()
        return own_state(cpu)
    drawn = {}
    for k, p in target.named_parameters(recurse=False):
        values = p.detach().to("cpu", torch.float64)
        s = float(values.std()) if values.numel() > 1 else 0.0
        s = s if np.isfinite(s) and s > 0 else _FLOOR_STD
        drawn[k] = torch.randn(p.shape, dtype=torch.float64) * s
    return drawn
