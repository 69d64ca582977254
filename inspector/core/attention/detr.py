"""The attention of DETR and Conditional DETR (transformers): each call's queries, keys and values per head, worked
out from the call's own inputs and weights as its forward computes them (no grad, nothing of the model changed), so
that `taps.AttentionTaps` records their calls whatever kernel the model runs (eager, SDPA, flash) and Chefer's
relevance reads a query's map on the image.

- DETR (`DetrSelfAttention`, `DetrCrossAttention`): q and k from the input plus its position embedding (in the
  cross-attention, the keys from the encoder's output plus the feature grid's embedding), v from the input alone;
- Conditional DETR: its encoder's self-attention is DETR's; its decoder's self-attention adds separate content and
  position projections; its cross-attention joins each head's content part and position part side by side (q and
  k twice a head's width, v at a head's width), scaled as its forward scales them.

Deformable DETR, RT-DETR and D-FINE have no such map: each query samples a few points at learned offsets.
"""

from __future__ import annotations

import inspect
from typing import Callable

import torch
from torch import nn


def _split(t: torch.Tensor, width: int) -> torch.Tensor:
    """(B, N, heads * width) -> (B, heads, N, width)."""
    return t.view(*t.shape[:-1], -1, width).transpose(1, 2)


def _plus(x: torch.Tensor, embedding: torch.Tensor | None) -> torch.Tensor:
    return x if embedding is None else x + embedding


def _detr(m: nn.Module, given: dict):
    """DETR's self- and cross-attention (and Conditional DETR's encoder)."""
    x, source = given["hidden_states"], given.get("key_value_states")
    queries = _plus(x, given.get("position_embeddings"))
    if source is None:
        keys, values = queries, x
    else:
        keys, values = _plus(source, given.get("encoder_position_embeddings")), source
    return tuple(_split(p(t), m.head_dim) for p, t in ((m.q_proj, queries), (m.k_proj, keys), (m.v_proj, values)))


def _conditional_self(m: nn.Module, given: dict):
    x, position = given["hidden_states"], given["query_position_embeddings"]
    q = m.q_content_proj(x) + m.q_pos_proj(position)
    k = m.k_content_proj(x) + m.k_pos_proj(position)
    return _split(q, m.head_dim), _split(k, m.head_dim), _split(m.v_proj(x), m.head_dim)


def _conditional_cross(m: nn.Module, given: dict):
    x, source = given["hidden_states"], given["encoder_hidden_states"]
    q, k = m.q_content_proj(x), m.k_content_proj(source)
    key_position = m.k_pos_proj(given["encoder_position_embeddings"])
    if given.get("query_position_embeddings") is not None:  # its first layer
        q, k = q + m.q_pos_proj(given["query_position_embeddings"]), k + key_position
    sine = m.q_pos_sine_proj(given["query_sine_embed"])
    q = torch.cat([_split(q, m.head_dim), _split(sine, m.head_dim)], dim=-1)
    k = torch.cat([_split(k, m.head_dim), _split(key_position, m.head_dim)], dim=-1)
    return q, k, _split(m.v_proj(source), m.head_dim)


_CONDITIONAL = "transformers.models.conditional_detr.modeling_conditional_detr"
#: (module, class) -> its (q, k, v) per head, (B, heads, N or S, width), from a call's arguments by name.
QKV: dict[tuple[str, str], Callable[[nn.Module, dict], tuple]] = {
    ("transformers.models.detr.modeling_detr", "DetrSelfAttention"): _detr,
    ("transformers.models.detr.modeling_detr", "DetrCrossAttention"): _detr,
    (_CONDITIONAL, "ConditionalDetrSelfAttention"): _detr,
    (_CONDITIONAL, "ConditionalDetrDecoderSelfAttention"): _conditional_self,
    (_CONDITIONAL, "ConditionalDetrDecoderCrossAttention"): _conditional_cross,
}


def is_detr_attention(module: nn.Module) -> bool:
    return (type(module).__module__, type(module).__name__) in QKV


def _given(m: nn.Module, args: tuple, kwargs: dict) -> dict:
    names = [n for n in inspect.signature(m.forward).parameters if n not in ("args", "kwargs")]
    return dict(zip(names, args)) | kwargs


def detr_attention(m: nn.Module, args: tuple, kwargs: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """(probabilities (B, heads, N, S), values (B, heads, S, width)) of one call: softmax(q k^T * scaling + mask),
    the mask added where it is a float mask, applied where it is a boolean one (True: attend)."""
    given = _given(m, args, kwargs)
    with torch.no_grad():
        q, k, v = QKV[(type(m).__module__, type(m).__name__)](m, given)
        scores = (q @ k.transpose(-2, -1)) * m.scaling
        mask = given.get("attention_mask")
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else scores + mask
        return scores.softmax(dim=-1), v
