"""BEiT's and EVA-02's attention in timm: the probabilities the site gives are the ones the module
used (its output is rebuilt from them), and zero_heads equals a manual computation."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from inspector.core import capture, load_model

pytestmark = pytest.mark.numeric  # CI runs these again under another oneDNN instruction set


def _values(m, x):
    """v as (B, heads, N, head_dim), worked out here from the module's weights."""
    b, n, c = x.shape
    if getattr(m, "q_bias", None) is not None:
        w, bias = m.qkv.weight[2 * c:], m.v_bias
    else:
        w, bias = m.qkv.weight[2 * c:], None if m.qkv.bias is None else m.qkv.bias[2 * c:]
    return F.linear(x, w, bias).reshape(b, n, m.num_heads, -1).transpose(1, 2)


def _rebuilt(m, x, probs, zero=()):
    """The module's output from `probs`: heads (without `zero`) joined, sub-norm and gate, projection."""
    per_head = torch.as_tensor(probs) @ _values(m, x)
    per_head[:, list(zero)] = 0
    b, n, c = x.shape
    joined = getattr(m, "norm", torch.nn.Identity())(per_head.transpose(1, 2).reshape(b, n, c))
    if getattr(m, "gate", None) is not None:
        joined = joined * m.gate(x).sigmoid()
    return m.proj(joined)


@pytest.mark.parametrize("name, path", [("timm:beit_base_patch16_224", "blocks.3.attn"),
                                        ("timm:eva02_tiny_patch14_224", "blocks.3.attn")])
def test_probabilities_rebuild_the_modules_output(name, path):
    loaded = load_model(name, seed=0)
    attn = loaded.module.get_submodule(path)
    seen = {}

    def keep(_m, args, _kwargs, output):
        seen["x"], seen["out"] = args[0].detach().clone(), output.detach().clone()
    handle = attn.register_forward_hook(keep, with_kwargs=True)
    x = torch.randn(loaded.input_shape, generator=torch.Generator().manual_seed(0))
    try:
        result = capture(loaded, x, layers=[path], sites="attention")
    finally:
        handle.remove()
    probs = result[f"{path}:attention"]
    assert probs.shape == (1, attn.num_heads, seen["x"].shape[1], seen["x"].shape[1])
    np.testing.assert_allclose(probs.sum(-1), 1.0, rtol=1e-5)
    with torch.no_grad():
        rebuilt = _rebuilt(attn, seen["x"], probs)
        without_bias = _rebuilt(attn, seen["x"], torch.softmax(torch.as_tensor(probs).log() * 0.5, -1))
    np.testing.assert_allclose(rebuilt.numpy(), seen["out"].numpy(), rtol=1e-4, atol=1e-5)
    assert not np.allclose(without_bias.numpy(), seen["out"].numpy(), atol=1e-4)  # the check can fail


def test_zero_heads_equals_a_manual_computation_with_evas_sub_norm():
    """EVA-02 joins the heads through its inner norm and gate: the heads are zero before them."""
    path = "blocks.2.attn"
    loaded = load_model("timm:eva02_tiny_patch14_224", seed=0)
    attn = loaded.module.get_submodule(path)
    seen = {}

    def keep(_m, args, _kwargs, output):
        seen["x"], seen["out"] = args[0].detach().clone(), output.detach().clone()
    handle = attn.register_forward_hook(keep, with_kwargs=True)
    x = torch.randn(loaded.input_shape, generator=torch.Generator().manual_seed(1))
    try:
        plain = capture(loaded, x, layers=[path], sites="attention")
        seen.clear()
        capture(loaded, x, layers=[path], sites="output", edits=[f"{path}:attention=zero_heads([0, 2])"])
    finally:
        handle.remove()
    with torch.no_grad():
        expected = _rebuilt(attn, seen["x"], plain[f"{path}:attention"], zero=(0, 2))
    np.testing.assert_allclose(seen["out"].numpy(), expected.numpy(), rtol=1e-4, atol=1e-5)
