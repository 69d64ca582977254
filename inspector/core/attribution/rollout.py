"""Attention rollout (Abnar & Zuidema 2020): the attention of every attention module, in forward order,
multiplied through the residual path; class-agnostic.
"""

from __future__ import annotations

import torch
from torch import nn

from ..attention.site import supports_attention
from ..attention.supported import supported_text
from ..common.errors import SpecError
from ..target.objective import parse_target
from ..engine.runner import RunSpec, run
from ..sources.grids import token_grid
from ..sources.loaded import LoadedModel
from .cams.layers import upsample
from .record import Attribution, _unwrap


def attention_rollout(model: LoadedModel | nn.Module, x: torch.Tensor) -> Attribution:
    """Attention rollout (Abnar & Zuidema 2020): per attention module in forward order, the heads'
    mean plus the identity (the residual path), rows renormalised; their product; the row of the
    class token (the mean row without one) over the patch grid, upsampled to the input in [0, 1]. An
    attention pool's cross-attention (SigLIP's head: learned queries, not tokens) is no step of the product.
    Class-agnostic: no target, no backward."""
    module, labels = _unwrap(model)
    grid = token_grid(module, tuple(x.shape[-2:]))
    if grid is None:
        raise SpecError("Attention rollout needs a transformer whose patch grid is known (timm ViT-family, "
                        "torchvision ViT, transformers ViT-family); this model has no patch grid. Use saliency or "
                        "Grad-CAM.")
    paths = [p for p, m in module.named_modules() if p and supports_attention(m)]
    if not paths:
        raise SpecError(f"Attention rollout needs attention modules ({supported_text()}); this model has none.")
    result = run(module, x, RunSpec(tuple(paths), frozenset({"attention"}), (), parse_target("sum"),
                                    stats=False), labels)
    rollout, pools = None, []
    for capture in result.captures.values():  # in the order the modules ran
        probs = torch.from_numpy(capture.array[:1]).double().mean(dim=1)[0]  # (N, N), heads averaged
        if probs.shape[0] != probs.shape[1]:  # learned queries over the tokens (SigLIP's head): no token mixing
            pools.append(capture.key.layer)
            continue
        step = 0.5 * probs + 0.5 * torch.eye(probs.shape[0], dtype=probs.dtype)
        step = step / step.sum(dim=-1, keepdim=True)
        rollout = step if rollout is None else step @ rollout
    n = grid.height * grid.width
    if rollout is None or rollout.shape[0] != grid.prefix + n:
        raise SpecError(f"Attention rollout: the attention does not cover the {grid.describe()} "
                        f"(windowed attention?).")
    row = rollout[0] if grid.prefix else rollout.mean(dim=0)
    cam = row[grid.prefix:].reshape(grid.height, grid.width).float().numpy()
    whose = "the class token's row" if grid.prefix else "the mean row (no class token)"
    left = f" (the attention pool {', '.join(pools)} left out: its queries are not tokens)" if pools else ""
    return Attribution("rollout", upsample(cam, tuple(x.shape[-2:])), "no class (class-agnostic)", None, None,
                       cam, warnings=(f"across {len(paths) - len(pools)} attention modules, {whose}{left}",)
                       + tuple(result.warnings))


def rollout_map(model, x, target, layer, options) -> Attribution:
    return attention_rollout(model, x)
