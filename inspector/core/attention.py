"""The `attention` site: softmax attention probabilities per head, (B, heads, N, N).

Worked out from the attention module's own inputs and weights (no grad, nothing of the model
changed), because fused attention (`scaled_dot_product_attention`, and `nn.MultiheadAttention`
called with `need_weights=False` as torchvision's ViT does) never forms them. Supported:
`torch.nn.MultiheadAttention` and timm's ViT-family `Attention` (a `qkv` projection, `num_heads`,
`q_norm`/`k_norm`, `scale`); other modules get a note instead.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


def supports_attention(module: nn.Module) -> bool:
    return isinstance(module, nn.MultiheadAttention) or _is_timm_attention(module)


def _is_timm_attention(module: nn.Module) -> bool:
    return (isinstance(getattr(module, "qkv", None), nn.Linear) and isinstance(getattr(module, "num_heads", None), int)
            and hasattr(module, "scale"))


def attention_probs(module: nn.Module, args: tuple, kwargs: dict) -> torch.Tensor:
    """(B, heads, N_query, N_key) probabilities the module's forward computes for these inputs."""
    with torch.no_grad():
        if isinstance(module, nn.MultiheadAttention):
            return _mha_probs(module, args, kwargs)
        return _timm_probs(module, args[0] if args else kwargs["x"])


def _mha_probs(m: nn.MultiheadAttention, args: tuple, kwargs: dict) -> torch.Tensor:
    names = ("query", "key", "value", "key_padding_mask", "need_weights", "attn_mask")
    given = dict(zip(names, args)) | kwargs
    query, key = given["query"], given["key"]
    if not m.batch_first and query.dim() == 3:  # (N, B, E) -> (B, N, E)
        query, key = query.transpose(0, 1), key.transpose(0, 1)
    unbatched = query.dim() == 2
    if unbatched:
        query, key = query[None], key[None]
    e, h = m.embed_dim, m.num_heads
    if m._qkv_same_embed_dim:
        w_q, w_k = m.in_proj_weight[:e], m.in_proj_weight[e:2 * e]
    else:
        w_q, w_k = m.q_proj_weight, m.k_proj_weight
    b_q = b_k = None
    if m.in_proj_bias is not None:
        b_q, b_k = m.in_proj_bias[:e], m.in_proj_bias[e:2 * e]
    q, k = F.linear(query, w_q, b_q), F.linear(key, w_k, b_k)
    if m.bias_k is not None:
        k = torch.cat([k, m.bias_k.expand(k.shape[0], 1, -1)], dim=1)
    if m.add_zero_attn:
        k = torch.cat([k, k.new_zeros(k.shape[0], 1, k.shape[2])], dim=1)
    batch, n, s = q.shape[0], q.shape[1], k.shape[1]
    q = q.reshape(batch, n, h, e // h).transpose(1, 2)
    k = k.reshape(batch, s, h, e // h).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(e // h)
    scores = _masked(scores, given.get("attn_mask"), given.get("key_padding_mask"), batch, h, n, s)
    probs = scores.softmax(dim=-1)
    return probs[0] if unbatched else probs


def _masked(scores, attn_mask, key_padding_mask, batch, heads, n, s):
    for mask, shape in ((attn_mask, None), (key_padding_mask, (batch, 1, 1, -1))):
        if mask is None:
            continue
        m = mask[..., :s] if mask.shape[-1] > s else mask
        if shape is not None:
            m = m.reshape(*shape)
        elif m.dim() == 3:  # (B * heads, N, S)
            m = m.reshape(batch, heads, n, -1)
        if m.dtype == torch.bool:
            scores = scores.masked_fill(m, float("-inf"))
        else:
            scores = scores + m
    return scores


def _timm_probs(m: nn.Module, x: torch.Tensor) -> torch.Tensor:
    batch, n, _ = x.shape
    heads = m.num_heads
    qkv = m.qkv(x).reshape(batch, n, 3, heads, -1).permute(2, 0, 3, 1, 4)
    q, k = qkv.unbind(0)[:2]
    q, k = getattr(m, "q_norm", nn.Identity())(q), getattr(m, "k_norm", nn.Identity())(k)
    return ((q * m.scale) @ k.transpose(-2, -1)).softmax(dim=-1)
