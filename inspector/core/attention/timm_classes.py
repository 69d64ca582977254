"""timm's attention classes: their softmax probabilities per head, worked out from a call's inputs.

Each function repeats what the class's unfused path computes before its softmax (no grad, nothing
of the module changed), so the probabilities are also right when timm uses fused attention:
- the plain ViT `Attention` (ViT, DeiT, DINOv2): softmax(q k^T * scale) after q_norm/k_norm;
- Swin's `WindowAttention`: per window, plus the relative position bias and the shifted windows' mask;
- BEiT's `Attention`: q/v biases, plus its relative position bias and a shared one passed in;
- EVA's `EvaAttention` (EVA-02): q/v biases or separate projections, q_norm/k_norm, the rotary
  embedding on the patch tokens, the attention mask.
Swin V2 (cosine attention), CaiT's talking heads and other look-alikes are not here: they get a
warning from the engine instead of probabilities that would be wrong.
"""

from __future__ import annotations

from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn


def _qkv(m: nn.Module, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """q, k, v as (B, heads, N, head_dim), with BEiT/EVA's separate q/k/v biases where they have them."""
    batch, n, _ = x.shape
    if getattr(m, "qkv", None) is None:  # EVA without a fused qkv projection
        return tuple(getattr(m, f"{p}_proj")(x).reshape(batch, n, m.num_heads, -1).transpose(1, 2) for p in "qkv")
    if getattr(m, "q_bias", None) is None:
        qkv = m.qkv(x)
    else:
        bias = torch.cat((m.q_bias, m.k_bias, m.v_bias))
        qkv = m.qkv(x) + bias if getattr(m, "qkv_bias_separate", False) else F.linear(x, m.qkv.weight, bias)
    return qkv.reshape(batch, n, 3, m.num_heads, -1).permute(2, 0, 3, 1, 4).unbind(0)


def _given(args: tuple, kwargs: dict, names: tuple[str, ...]) -> dict:
    return dict(zip(names, args)) | kwargs


def vit_probs(m: nn.Module, args: tuple, kwargs: dict) -> torch.Tensor:
    q, k, _v = _qkv(m, _given(args, kwargs, ("x",))["x"])
    q, k = getattr(m, "q_norm", nn.Identity())(q), getattr(m, "k_norm", nn.Identity())(k)
    return ((q * m.scale) @ k.transpose(-2, -1)).softmax(dim=-1)


def window_probs(m: nn.Module, args: tuple, kwargs: dict) -> torch.Tensor:
    given = _given(args, kwargs, ("x", "mask"))
    x, mask = given["x"], given.get("mask")
    n = x.shape[1]
    q, k, _v = _qkv(m, x)
    scores = (q * m.scale) @ k.transpose(-2, -1) + m._get_rel_pos_bias()
    if mask is not None:
        windows = mask.shape[0]
        scores = (scores.view(-1, windows, m.num_heads, n, n) + mask.unsqueeze(1).unsqueeze(0))
        scores = scores.view(-1, m.num_heads, n, n)
    return scores.softmax(dim=-1)


def beit_probs(m: nn.Module, args: tuple, kwargs: dict) -> torch.Tensor:
    given = _given(args, kwargs, ("x", "shared_rel_pos_bias"))
    q, k, _v = _qkv(m, given["x"])
    scores = (q * m.scale) @ k.transpose(-2, -1)
    if getattr(m, "relative_position_bias_table", None) is not None:
        scores = scores + m._get_rel_pos_bias()
    if given.get("shared_rel_pos_bias") is not None:
        scores = scores + given["shared_rel_pos_bias"]
    return scores.softmax(dim=-1)


def eva_probs(m: nn.Module, args: tuple, kwargs: dict) -> torch.Tensor:
    from timm.layers import apply_rot_embed_cat
    from timm.layers.attention import maybe_add_mask, resolve_self_attn_mask

    given = _given(args, kwargs, ("x", "rope", "attn_mask", "is_causal"))
    x, rope = given["x"], given.get("rope")
    q, k, v = _qkv(m, x)
    q, k = m.q_norm(q), m.k_norm(k)
    if rope is not None:
        npt, half = m.num_prefix_tokens, getattr(m, "rotate_half", False)
        q = torch.cat([q[:, :, :npt], apply_rot_embed_cat(q[:, :, npt:], rope, half=half)], dim=2).type_as(v)
        k = torch.cat([k[:, :, :npt], apply_rot_embed_cat(k[:, :, npt:], rope, half=half)], dim=2).type_as(v)
    scores = (q * m.scale) @ k.transpose(-2, -1)
    bias = resolve_self_attn_mask(x.shape[1], scores, given.get("attn_mask"), is_causal=bool(given.get("is_causal")))
    return maybe_add_mask(scores, bias).softmax(dim=-1)


#: (module, class) -> the function giving that class's probabilities.
TIMM_PROBS: dict[tuple[str, str], Callable[[nn.Module, tuple, dict], torch.Tensor]] = {
    ("timm.layers.attention", "Attention"): vit_probs,
    ("timm.models.vision_transformer", "Attention"): vit_probs,
    ("timm.models.swin_transformer", "WindowAttention"): window_probs,
    ("timm.models.beit", "Attention"): beit_probs,
    ("timm.models.eva", "EvaAttention"): eva_probs,
    ("timm.layers.attention", "EvaAttention"): eva_probs,
}


def probs_function(module: nn.Module) -> Callable[[nn.Module, tuple, dict], torch.Tensor] | None:
    return TIMM_PROBS.get((type(module).__module__, type(module).__name__))


def heads_joined_at(module: nn.Module) -> nn.Module:
    """The module whose input is the heads' attention outputs side by side: `proj`, or EVA's inner
    norm before it (sub-LN mixes the heads, so they are zeroed before it)."""
    norm = getattr(module, "norm", None)
    if probs_function(module) is eva_probs and isinstance(norm, nn.Module):
        return norm
    return module.proj
