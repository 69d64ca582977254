"""Attention in the graph, for the methods that need the gradient of a score with respect to the attention
probabilities (LeGrad, Chefer's relevance).

Fused attention (`scaled_dot_product_attention`) never forms the probabilities A, so no hook can hand out their
gradient. Each call of a tapped module is recorded as a `Tap` instead: a tensor of the forward's graph that is
the heads' outputs O = A V side by side (what the output projection takes) or a linear map of them
(`nn.MultiheadAttention`'s output, whose heads are joined inside one function no hook reaches: O's gradient is
the output's times the projection's weight), the values V and, when asked, A itself (worked out beside the module
as the `attention` site does). Per head, d score / d A = (d score / d O) V^T: exact whatever kernel the model
used, and nothing of the model's forward is computed twice but the values (and A, when asked).
Supported: the attention site's modules (`site.supports_attention`), timm's latent attention pool (the MAP
head of SigLIP and other `global_pool='map'` ViTs), and DETR's and Conditional DETR's attention (`detr`, for
Chefer's relevance of a query; not `tappable`: no vision transformer's block).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..common.hooks import Hooked
from .detr import detr_attention, is_detr_attention
from .site import _hf_probs, _is_hf_attention, _mha_attention, _output_projection, supports_attention
from .timm_classes import _given, _qkv, probs_function, vit_probs


@dataclass(frozen=True)
class Tap:
    """One call of an attention module: `node`, in the graph, is the heads' outputs side by side (B, N, heads * d),
    or those times `weight`^T ((N, B, E) when `transposed`); `values` (B, heads, S, d) and `probs`
    (B, heads, N, S) or None are detached."""

    path: str
    node: torch.Tensor
    values: torch.Tensor
    probs: torch.Tensor | None
    weight: torch.Tensor | None = None
    transposed: bool = False

    def probs_grad(self, grad_node: torch.Tensor | None) -> torch.Tensor:
        """d score / d A (B, heads, N, S) from d score / d node (None: the score does not reach it: zeros)."""
        batch, heads, _keys, width = self.values.shape
        grad = torch.zeros_like(self.node) if grad_node is None else grad_node.detach()
        grad = grad.transpose(0, 1) if self.transposed else grad if grad.dim() == 3 else grad[None]
        if self.weight is not None:
            grad = grad @ self.weight.detach()
        per_head = grad.reshape(batch, grad.shape[1], heads, width).transpose(1, 2)
        return per_head @ self.values.transpose(-2, -1)


def is_latent_pool(module: nn.Module) -> bool:
    """timm's attention pool over learned latent queries (`global_pool='map'`: SigLIP's head)."""
    return type(module).__name__ == "AttentionPoolLatent" and type(module).__module__.startswith("timm.")


def tappable(module: nn.Module) -> bool:
    return supports_attention(module) or is_latent_pool(module)


def _latent_pool(m: nn.Module, args: tuple, kwargs: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """timm's AttentionPoolLatent: (probs (B, heads, latents, N), values (B, heads, N, d)), as its forward."""
    x = _given(args, kwargs, ("x",))["x"]
    if m.pos_embed is not None:
        x = x + m.pos_embed.unsqueeze(0).to(x.dtype)
    batch, n, _ = x.shape
    q = m.q(m.latent.expand(batch, -1, -1)).reshape(batch, m.latent_len, m.num_heads, m.head_dim).transpose(1, 2)
    k, v = m.kv(x).reshape(batch, n, 2, m.num_heads, m.head_dim).permute(2, 0, 3, 1, 4).unbind(0)
    q, k = m.q_norm(q), m.k_norm(k)
    return ((q * m.scale) @ k.transpose(-2, -1)).softmax(dim=-1), v


def _values(m: nn.Module, args: tuple, kwargs: dict) -> torch.Tensor:
    """The values (B, heads, S, d) a timm or transformers attention call computes."""
    if _is_hf_attention(m):
        x = _given(args, kwargs, ("hidden_states",))["hidden_states"]
        return m.v_proj(x).view(*x.shape[:-1], -1, m.head_dim).transpose(1, 2)
    x = _given(args, kwargs, ("x",))["x"]
    if probs_function(m) is vit_probs and getattr(m, "q_bias", None) is None:  # a third of the qkv projection
        width = m.qkv.out_features // 3
        bias = m.qkv.bias[2 * width:] if m.qkv.bias is not None else None
        return F.linear(x, m.qkv.weight[2 * width:], bias).reshape(*x.shape[:2], m.num_heads, -1).transpose(1, 2)
    return _qkv(m, x)[2]


def _mha_values(m: nn.MultiheadAttention, args: tuple, kwargs: dict) -> tuple[torch.Tensor, bool]:
    """nn.MultiheadAttention's values (B, heads, S, d) for a call, and whether it was (N, B, E); the
    probabilities' full computation (`site`) where extra keys or separate projections make it more than one."""
    given = dict(zip(("query", "key", "value"), args)) | kwargs
    value, query = given["value"], given["query"]
    transposed = not m.batch_first and query.dim() == 3
    if not m._qkv_same_embed_dim or m.bias_v is not None or m.add_zero_attn:
        _probs, values, _unbatched, transposed = _mha_attention(m, args, kwargs)
        return values, transposed
    value = value.transpose(0, 1) if transposed else value if value.dim() == 3 else value[None]
    e = m.embed_dim
    bias = m.in_proj_bias[2 * e:] if m.in_proj_bias is not None else None
    v = F.linear(value, m.in_proj_weight[2 * e:], bias)
    return v.reshape(*v.shape[:2], m.num_heads, -1).transpose(1, 2), transposed


def _joined_at(m: nn.Module) -> nn.Module:
    """The module whose input is the heads' outputs side by side: transformers' output projection; timm's
    `norm` before the projection (Identity unless scale_norm; EVA's sub-LN), else its `proj`."""
    if _is_hf_attention(m) or is_detr_attention(m):
        return _output_projection(m)
    norm = getattr(m, "norm", None)
    return norm if isinstance(norm, nn.Module) and not is_latent_pool(m) else m.proj


class AttentionTaps(Hooked):
    """Hooks on `modules` (path -> module, each `tappable`) recording a `Tap` per call, in call order
    (`taps`); `probs`: keep the probabilities too. Every hook is removed on exit."""

    def __init__(self, modules: dict[str, nn.Module], probs: bool = False) -> None:
        self.modules, self.keep_probs = dict(modules), probs
        self.taps: list[Tap] = []
        self._pending: dict[str, tuple[torch.Tensor, torch.Tensor | None]] = {}

    def __exit__(self, *exc) -> None:
        super().__exit__(*exc)
        self._pending.clear()

    def _register(self):
        for path, module in self.modules.items():
            if isinstance(module, nn.MultiheadAttention):
                yield module.register_forward_hook(self._mha(path), with_kwargs=True)
                continue
            yield module.register_forward_pre_hook(self._before(path), with_kwargs=True)
            yield _joined_at(module).register_forward_pre_hook(self._joined(path))

    def _before(self, path: str):
        def hook(module, args, kwargs):
            with torch.no_grad():
                if is_latent_pool(module):
                    probs, values = _latent_pool(module, args, kwargs)
                elif is_detr_attention(module):
                    probs, values = detr_attention(module, args, kwargs)
                else:
                    values = _values(module, args, kwargs)
                    probs = (_hf_probs(module, args, kwargs) if _is_hf_attention(module)
                             else probs_function(module)(module, args, kwargs)) if self.keep_probs else None
            self._pending[path] = (values, probs if self.keep_probs else None)
        return hook

    def _joined(self, path: str):
        def hook(_module, args):
            values, probs = self._pending.pop(path)
            self.taps.append(Tap(path, args[0], values, probs))
        return hook

    def _mha(self, path: str):
        def hook(m: nn.MultiheadAttention, args, kwargs, output):
            with torch.no_grad():
                if self.keep_probs:
                    probs, values, unbatched, transposed = _mha_attention(m, args, kwargs)
                else:
                    (values, transposed), probs = _mha_values(m, args, kwargs), None
            node = output[0] if isinstance(output, tuple) else output
            self.taps.append(Tap(path, node, values, probs, m.out_proj.weight, transposed))
        return hook
