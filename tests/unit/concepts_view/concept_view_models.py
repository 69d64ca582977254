"""Small models and dictionaries for the Concepts view's tests: a CNN whose layer `act` (a ReLU, >= 0) has a
path around it (a skip from `stem`) and an in-place ReLU after it, and the independent computations the tests
compare with (autograd through coefficients held as leaf tensors)."""

from __future__ import annotations

import torch
from torch import nn

from inspector.core.concepts import Dictionary
from inspector.core.sources.loaded import LoadedModel


class Skipped(nn.Module):
    """x -> stem -> act (ReLU) -> tail (in-place ReLU, conv, pool) -> + a skip from stem -> 3 logits."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.stem = nn.Conv2d(3, 6, 3, padding=1)
        self.act = nn.ReLU()
        self.tail = nn.Sequential(nn.ReLU(inplace=True), nn.Conv2d(6, 5, 3, padding=1), nn.Tanh(),
                                  nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.skip = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 5))
        self.head = nn.Linear(5, 3)

    def forward(self, x):
        s = self.stem(x)
        return self.head(self.tail(self.act(s)) + self.skip(s))


def skipped() -> LoadedModel:
    return LoadedModel(Skipped().eval(), "skipped", input_shape=(1, 3, 7, 6))


def image(seed: int = 1, shape=(1, 3, 7, 6)) -> torch.Tensor:
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


def nmf_dictionary(k: int = 4, channels: int = 6, layer: str = "act", model: str = "skipped",
                   seed: int = 2) -> Dictionary:
    """Non-negative, not orthogonal directions: NNLS has active sets of several concepts."""
    gen = torch.Generator().manual_seed(seed)
    return Dictionary("nmf", torch.rand(k, channels, generator=gen) + 0.05, layer, "NCHW", model)


def sae_dictionary(k: int = 5, channels: int = 6, layer: str = "act", model: str = "skipped", layout="NCHW",
                   sparsity: int = 3, seed: int = 3) -> Dictionary:
    gen = torch.Generator().manual_seed(seed)
    return Dictionary("sae", torch.randn(k, channels, generator=gen), layer, layout, model, sparsity,
                      torch.randn(k, channels, generator=gen), torch.randn(k, generator=gen) * 0.1,
                      torch.randn(channels, generator=gen) * 0.1)


def output_of(model: nn.Module, layer: str, x: torch.Tensor, replace=None):
    """The model's output and the layer's output (its first call); `replace(a)` gives the tensor the model goes
    on with instead of a."""
    seen = {}
    module = dict(model.named_modules())[layer]

    def hook(_m, _args, out):
        if "a" in seen:
            return None
        seen["a"] = out
        return None if replace is None else replace(out)

    handle = module.register_forward_hook(hook)
    try:
        logits = model(x)
    finally:
        handle.remove()
    return logits, seen["a"]


def relevance_by_autograd(model: nn.Module, layer: str, x: torch.Tensor, d: Dictionary, target: int,
                          picture=lambda c: c) -> torch.Tensor:
    """sum over positions of dT/dc_i * c_i, the layer's output written as recon(c) + residual with c a leaf
    tensor that requires grad (`picture(c)`: the coefficients at the picture's positions, (P, K))."""
    leaf = {}

    def replace(a):
        c = d.coefficients(a.detach()).detach().requires_grad_(True)
        leaf["c"] = c
        recon = d.reconstruct(c)
        return recon + (a - d.reconstruct(c.detach())).detach()

    logits, _ = output_of(model, layer, x, replace)
    (grad,) = torch.autograd.grad(logits[0, target], [leaf["c"]])
    return picture(grad * leaf["c"].detach()).sum(0)
