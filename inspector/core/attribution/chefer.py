"""Chefer et al.'s relevance (ICCV 2021, "Generic Attention-model Explainability for Interpreting Bi-Modal and
Encoder-Decoder Transformers"; the reference code is hila-chefer/Transformer-MM-Explainability): attention
rollout weighted by the target's gradient, so it is class-specific where rollout is not.

R starts as the identity over the tokens; for each block in forward order, with A its attention probabilities
and dA the gradient of the target with respect to them, R += mean over heads of clamp(dA * A, min=0) @ R. The
class token's row of R over the patches is the map, upsampled to the input and scaled to [0, 1]. A DETR's box has
the paper's encoder-decoder rules (`chefer_detr`).
"""

from __future__ import annotations

import torch
from torch import nn

from ..attention.taps import AttentionTaps
from ..common.errors import SpecError
from ..target.objective import objective, parse_target, primary_output
from ..sources.loaded import LoadedModel
from ..records.support import NO_DETR_ATTENTION
from .cams.layers import upsample
from .chefer_detr import box_methods, chefer_query, query_family
from .entry import is_detector
from .record import Attribution, _device, _unwrap
from .vit_blocks import find_blocks, patch_part


def chefer(model: LoadedModel | nn.Module, x: torch.Tensor, target=None) -> Attribution:
    """Chefer's relevance of `target` for sample 0 of `x` (see the module's docstring)."""
    module, _labels = _unwrap(model)
    hw = tuple(x.shape[-2:])
    vit = find_blocks(module, hw, "Chefer's relevance")
    if vit.grid.prefix == 0:
        raise SpecError("Chefer's relevance is read from the class token's row; this model has no class token "
                        "(its head pools the patches). Use LeGrad or attention rollout.")
    wanted = parse_target(target)
    modules = dict(module.named_modules())
    x = x.detach().to(_device(module)).requires_grad_(True)
    with AttentionTaps({p: modules[p] for p in vit.attention}, probs=True) as taps, torch.enable_grad():
        output = module(x)
    obj, index, resolved = objective(primary_output(output), wanted, hw, module)
    if len(taps.taps) != len(vit.attention):
        raise SpecError(f"Chefer's relevance: {len(taps.taps)} attention calls for {len(vit.attention)} blocks "
                        f"(an attention module called more than once?).")
    if not obj.requires_grad:
        raise SpecError(f"Chefer's relevance: the target ({resolved}) does not depend on the attention.")
    grads = torch.autograd.grad(obj, [t.node for t in taps.taps], allow_unused=True)
    relevance = None
    for tap, grad in zip(taps.taps, grads):
        probs, dprobs = tap.probs[0].double(), tap.probs_grad(grad)[0].double()
        if probs.shape[-1] != probs.shape[-2]:
            raise SpecError(f"Chefer's relevance: {tap.path} is not self-attention ({probs.shape[-2]} queries, "
                            f"{probs.shape[-1]} keys).")
        if relevance is None:
            relevance = torch.eye(probs.shape[-1], dtype=probs.dtype, device=probs.device)
        relevance = relevance + (dprobs * probs).clamp(min=0).mean(dim=0) @ relevance
    cam = patch_part(relevance[0], vit.grid, "Chefer's relevance").float().cpu().numpy()
    notes = (f"relevance over {len(vit.blocks)} blocks, the class token's row",)
    return Attribution("chefer", upsample(cam, hw), str(resolved), index, None, cam, notes=notes)


def chefer_map(model, x, target, layer, options) -> Attribution:
    """A vision transformer's class (`chefer`) or a DETR's box (`chefer_detr`); any other detector is refused."""
    if query_family(_unwrap(model)[0]) is not None:
        return chefer_query(model, x, target)
    if is_detector(model, x):
        raise SpecError(f"Chefer's relevance of a box {NO_DETR_ATTENTION} (DETR and Conditional DETR from hf: "
                        f"folders); this detector is a {type(_unwrap(model)[0]).__name__}. For its boxes use "
                        f"{box_methods(_unwrap(model)[0])}.")
    return chefer(model, x, target)
