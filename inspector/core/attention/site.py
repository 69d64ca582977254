"""The `attention` site: softmax attention probabilities per head, (B, heads, N, N).

Worked out from the attention module's own inputs and weights (no grad, nothing of the model
changed), because fused attention (`scaled_dot_product_attention`, and `nn.MultiheadAttention`
called with `need_weights=False` as torchvision's ViT does) never forms them. Supported:
`torch.nn.MultiheadAttention`, timm's ViT, Swin (per window: (B * windows, heads, w*w, w*w)), BEiT
and EVA attention (`inspector.core.attention.timm_classes`) and transformers' ViT-family attention
(ViT, DeiT, DINOv2 with and without registers, CLIP's and SigLIP's towers: `q_proj`/`k_proj`/`v_proj`, the
heads joined before `o_proj`/`out_proj`); other modules (Swin V2, CaiT, transformers' BEiT and Swin) get a
warning instead of probabilities that would be wrong.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from ..common.errors import SpecError
from .supported import supported_text
from .timm_classes import heads_joined_at, probs_function


def supports_attention(module: nn.Module) -> bool:
    return isinstance(module, nn.MultiheadAttention) or _is_timm_attention(module) or _is_hf_attention(module)


def _is_timm_attention(module: nn.Module) -> bool:
    return probs_function(module) is not None


#: transformers attention classes whose probabilities are exactly softmax(q k^T * scaling + mask):
#: separate q/k/v projections, heads side by side before the output projection. BEiT (relative
#: position bias), Swin (windows and bias), SegFormer (reduced keys) are left out on purpose.
HF_ATTENTION = frozenset({
    ("transformers.models.vit.modeling_vit", "ViTAttention"),
    ("transformers.models.deit.modeling_deit", "DeiTAttention"),
    ("transformers.models.dinov2.modeling_dinov2", "Dinov2Attention"),
    ("transformers.models.dinov2_with_registers.modeling_dinov2_with_registers", "Dinov2WithRegistersAttention"),
    ("transformers.models.clip.modeling_clip", "CLIPAttention"),
    ("transformers.models.siglip.modeling_siglip", "SiglipAttention"),  # CLIP's, `scale` for `scaling`
})


def _is_hf_attention(module: nn.Module) -> bool:
    return (type(module).__module__, type(module).__name__) in HF_ATTENTION


def heads_of(module: nn.Module) -> int:
    """How many heads an attention module this app knows has."""
    return int(getattr(module, "num_heads", None) or module.num_attention_heads)


def _output_projection(module: nn.Module) -> nn.Linear:
    """The projection that takes the heads' outputs side by side (timm `proj`, transformers `o_proj`/`out_proj`)."""
    return next(getattr(module, n) for n in ("proj", "o_proj", "out_proj") if isinstance(getattr(module, n, None),
                                                                                        nn.Linear))


def check_heads(module: nn.Module, path: str, heads) -> None:
    """SpecError unless `module` is an attention module with every head in `heads`."""
    if not supports_attention(module):
        raise SpecError(f"zero_heads at {path}: {type(module).__name__} is not an attention module this app knows "
                        f"({supported_text()}).")
    count = heads_of(module)
    bad = [h for h in heads if not 0 <= h < count]
    if bad:
        raise SpecError(f"zero_heads at {path}: head(s) {bad} out of range; it has {count} heads (0-{count - 1}).")


def ablate_heads(module: nn.Module, heads: list[int]) -> list:
    """Hooks (handles to remove) that zero `heads`' outputs before `module`'s output projection."""
    if isinstance(module, nn.MultiheadAttention):
        def recompute(m, args, kwargs, output):
            return _mha_without(m, args, kwargs, output, heads)
        return [module.register_forward_hook(recompute, with_kwargs=True)]
    width = _output_projection(module).in_features // heads_of(module)
    if _is_timm_attention(module):
        joined = heads_joined_at(module)
    else:
        joined = _output_projection(module)

    def zero_slices(_joined, args):  # the heads' outputs side by side, before the projection (or EVA's sub-norm)
        x = args[0]
        keep = torch.ones(x.shape[-1], dtype=x.dtype, device=x.device)
        for h in heads:
            keep[h * width:(h + 1) * width] = 0
        return (x * keep,) + tuple(args[1:])
    return [joined.register_forward_pre_hook(zero_slices)]


def attention_probs(module: nn.Module, args: tuple, kwargs: dict) -> torch.Tensor:
    """(B, heads, N_query, N_key) probabilities the module's forward computes for these inputs."""
    with torch.no_grad():
        if isinstance(module, nn.MultiheadAttention):
            probs, _v, unbatched, _t = _mha_attention(module, args, kwargs)
            return probs[0] if unbatched else probs
        if _is_hf_attention(module):
            return _hf_probs(module, args, kwargs)
        return probs_function(module)(module, args, kwargs)


def _mha_attention(m: nn.MultiheadAttention, args: tuple, kwargs: dict):
    """nn.MultiheadAttention's probabilities (B, heads, N, S) and values (B, heads, S, head_dim) for a
    call's arguments, batch first; whether the call was unbatched, and whether it was (N, B, E)."""
    names = ("query", "key", "value", "key_padding_mask", "need_weights", "attn_mask")
    given = dict(zip(names, args)) | kwargs
    query, key, value = given["query"], given["key"], given["value"]
    transposed = not m.batch_first and query.dim() == 3
    if transposed:  # (N, B, E) -> (B, N, E)
        query, key, value = (t.transpose(0, 1) for t in (query, key, value))
    unbatched = query.dim() == 2
    if unbatched:
        query, key, value = query[None], key[None], value[None]
    e, h = m.embed_dim, m.num_heads
    if m._qkv_same_embed_dim:
        w_q, w_k, w_v = m.in_proj_weight.chunk(3)
    else:
        w_q, w_k, w_v = m.q_proj_weight, m.k_proj_weight, m.v_proj_weight
    b_q = b_k = b_v = None
    if m.in_proj_bias is not None:
        b_q, b_k, b_v = m.in_proj_bias.chunk(3)
    q, k, v = F.linear(query, w_q, b_q), F.linear(key, w_k, b_k), F.linear(value, w_v, b_v)
    if m.bias_k is not None:
        k = torch.cat([k, m.bias_k.reshape(1, 1, -1).expand(k.shape[0], 1, -1)], dim=1)
        v = torch.cat([v, m.bias_v.reshape(1, 1, -1).expand(v.shape[0], 1, -1)], dim=1)
    if m.add_zero_attn:
        k = torch.cat([k, k.new_zeros(k.shape[0], 1, k.shape[2])], dim=1)
        v = torch.cat([v, v.new_zeros(v.shape[0], 1, v.shape[2])], dim=1)
    batch, n, s = q.shape[0], q.shape[1], k.shape[1]
    q = q.reshape(batch, n, h, e // h).transpose(1, 2)
    k = k.reshape(batch, s, h, e // h).transpose(1, 2)
    v = v.reshape(batch, s, h, e // h).transpose(1, 2)
    scores = _masked(q @ k.transpose(-2, -1) / math.sqrt(e // h), given.get("attn_mask"),
                     given.get("key_padding_mask"), batch, h, n, s)
    return scores.softmax(dim=-1), v, unbatched, transposed


def _mha_without(m: nn.MultiheadAttention, args: tuple, kwargs: dict, output, heads: list[int]):
    """nn.MultiheadAttention's output (eval mode) with `heads`' outputs zero before out_proj."""
    probs, v, unbatched, transposed = _mha_attention(m, args, kwargs)
    per_head = probs @ v  # (B, heads, N, head_dim)
    keep = torch.ones(m.num_heads, dtype=per_head.dtype, device=per_head.device)
    keep[list(heads)] = 0
    batch, n = per_head.shape[0], per_head.shape[2]
    joined = (per_head * keep[None, :, None, None]).transpose(1, 2).reshape(batch, n, m.embed_dim)
    out = F.linear(joined, m.out_proj.weight, m.out_proj.bias)
    if unbatched:
        out = out[0]
    elif transposed:
        out = out.transpose(0, 1)
    return (out,) + tuple(output[1:]) if isinstance(output, tuple) else out


def _masked(scores, attn_mask, key_padding_mask, batch, heads, n, s):
    """`scores` with the masks applied as nn.MultiheadAttention applies them (padded with a column
    that masks nothing where bias_k or add_zero_attn added keys)."""
    for mask, shape in ((attn_mask, None), (key_padding_mask, (batch, 1, 1, -1))):
        if mask is None:
            continue
        if mask.shape[-1] < s:
            mask = F.pad(mask, (0, s - mask.shape[-1]), value=False if mask.dtype == torch.bool else 0.0)
        if shape is not None:
            mask = mask.reshape(*shape)
        elif mask.dim() == 3:  # (B * heads, N, S)
            mask = mask.reshape(batch, heads, n, -1)
        if mask.dtype == torch.bool:
            scores = scores.masked_fill(mask, float("-inf"))
        else:
            scores = scores + mask
    return scores


def _hf_probs(m: nn.Module, args: tuple, kwargs: dict) -> torch.Tensor:
    """transformers' eager attention: softmax(q k^T * scaling + attention_mask) in float32."""
    given = dict(zip(("hidden_states", "attention_mask"), args)) | kwargs
    x, mask = given["hidden_states"], given.get("attention_mask")
    shape = (*x.shape[:-1], -1, m.head_dim)
    q = m.q_proj(x).view(shape).transpose(1, 2)
    k = m.k_proj(x).view(shape).transpose(1, 2)
    scaling = getattr(m, "scaling", None) or getattr(m, "scale", None) or m.head_dim ** -0.5
    scores = (q @ k.transpose(2, 3)) * scaling
    if mask is not None:
        scores = scores + mask
    return scores.softmax(dim=-1, dtype=torch.float32).to(q.dtype)
