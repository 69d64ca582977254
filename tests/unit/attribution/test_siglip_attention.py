"""SigLIP's vision tower in the attention methods: its `SiglipAttention` is an attention module the site knows
(probabilities equal to transformers' own eager `attentions`), LeGrad of a `text:` prompt on an `hf:` SigLIP
folder equals the reference rule worked out by hand at the head's attention pool (SigLIP has no class token: the
pool's probe reads block l's tokens), rollout leaves the pool's cross-attention out of its product, and Chefer's
relevance, read from a class token's row, is refused in one line."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from inspector.core import load_model
from inspector.core.attention.site import attention_probs, supports_attention
from inspector.core.attribution.entry import attribute
from inspector.core.common.errors import SpecError

transformers = pytest.importorskip("transformers")

sys.path.insert(0, str(Path(__file__).parents[1] / "sources"))
from clip_folders import siglip_folder  # noqa: E402

PROMPT = "a photo of a dog"


@pytest.fixture(scope="module")
def siglip(tmp_path_factory):
    from transformers.utils import logging

    logging.disable_progress_bar()
    folder = tmp_path_factory.mktemp("siglip")
    whole, _tok = siglip_folder(folder)
    return load_model(f"hf:{folder}"), whole


def _x() -> torch.Tensor:
    return torch.rand(1, 3, 32, 32, generator=torch.Generator().manual_seed(3))


def _pool(head, tokens: torch.Tensor):
    """transformers' SiglipMultiheadAttentionPoolingHead written out (its nn.MultiheadAttention's in and out
    projections by hand): (pooled (1, D), the probe's attention probabilities (1, heads, 1, N))."""
    mha, heads = head.attention, head.attention.num_heads
    width = tokens.shape[-1]
    w_q, w_k, w_v = mha.in_proj_weight.chunk(3)
    b_q, b_k, b_v = mha.in_proj_bias.chunk(3)
    q = F.linear(head.probe, w_q, b_q).reshape(1, 1, heads, -1).transpose(1, 2)
    k = F.linear(tokens, w_k, b_k).reshape(1, -1, heads, width // heads).transpose(1, 2)
    v = F.linear(tokens, w_v, b_v).reshape(1, -1, heads, width // heads).transpose(1, 2)
    probs = (q @ k.transpose(-2, -1) / (width // heads) ** 0.5).softmax(dim=-1)
    pooled = mha.out_proj((probs @ v).transpose(1, 2).reshape(1, 1, width))
    pooled = pooled + head.mlp(head.layernorm(pooled))
    return pooled[:, 0], probs


def test_siglip_attention_is_known_and_its_probabilities_are_transformers_own(siglip):
    _loaded, whole = siglip
    tower = whole.vision_model
    layer = tower.encoder.layers[1].self_attn
    assert supports_attention(layer) and type(layer).__name__ == "SiglipAttention"
    calls = []
    layer.register_forward_pre_hook(lambda m, a, k: calls.append(attention_probs(m, a, k)), with_kwargs=True)
    tower.config._attn_implementation = "eager"  # transformers hands out the probabilities it formed
    seen = tower(pixel_values=_x(), output_attentions=True)
    assert calls[0].shape == (1, 2, 16, 16)
    torch.testing.assert_close(calls[0], seen.attentions[1], rtol=1e-5, atol=1e-7)


@pytest.mark.numeric
def test_legrad_of_a_prompt_equals_the_rule_by_hand_at_the_attention_pool(siglip):
    loaded, whole = siglip
    x = _x()
    found = attribute(loaded, x, "legrad", f'text:"{PROMPT}"')
    tower = whole.vision_model
    with torch.no_grad():
        states = tower(pixel_values=x, output_hidden_states=True).hidden_states[1:]  # each block's tokens
        text = whole.get_text_features(**_tokens(loaded))
    text = text if isinstance(text, torch.Tensor) else text.pooler_output
    text = text / text.norm(dim=-1, keepdim=True)
    maps = []
    for tokens in states:  # block l's tokens handed to the head as if they were the last block's
        pooled, probs = _pool(tower.head, tower.post_layernorm(tokens))
        image = pooled / pooled.norm(dim=-1, keepdim=True)
        logit = (image @ text.t())[0, 0] * whole.logit_scale.exp() + whole.logit_bias[0]
        (grad,) = torch.autograd.grad(torch.sigmoid(logit), probs)  # SigLIP's score of one pair: its sigmoid
        maps.append(grad.clamp(min=0).mean(dim=1)[0, 0])  # heads averaged, the probe's row over the 16 patches
    expected = torch.stack(maps).mean(dim=0).reshape(4, 4)
    assert expected.abs().max() > 1e-4
    np.testing.assert_allclose(found.cam, expected.numpy(), rtol=1e-4, atol=1e-8)
    assert found.map.shape == (32, 32) and "through the attention pool vision_model.head.attention" in found.notes[0]


def _tokens(loaded) -> dict:
    tokens = loaded.module._tokens(PROMPT)
    return {"input_ids": tokens["input_ids"]}


@pytest.mark.numeric
def test_rollout_is_the_blocks_product_without_the_pool_read_by_the_mean_row(siglip):
    loaded, whole = siglip
    x = _x()
    found = attribute(loaded, x, "rollout")
    tower = whole.vision_model
    tower.config._attn_implementation = "eager"
    with torch.no_grad():
        attentions = tower(pixel_values=x, output_attentions=True).attentions
    rolled = None
    for probs in attentions:  # Abnar & Zuidema: heads' mean, plus the identity, rows renormalised
        step = 0.5 * probs[0].double().mean(dim=0) + 0.5 * torch.eye(16, dtype=torch.float64)
        step = step / step.sum(dim=-1, keepdim=True)
        rolled = step if rolled is None else step @ rolled
    np.testing.assert_allclose(found.cam, rolled.mean(dim=0).reshape(4, 4).float().numpy(), rtol=1e-5, atol=1e-7)
    assert "across 2 attention modules, the mean row (no class token) (the attention pool " \
           "vision_model.head.attention left out" in found.warnings[0]


def test_chefers_relevance_is_refused_in_one_line(siglip):
    loaded, _whole = siglip
    with pytest.raises(SpecError, match=r"^Chefer's relevance is read from the class token's row; this model has no "
                                        r"class token \(its head pools the patches\)\. Use LeGrad or attention "
                                        r"rollout\.$"):
        attribute(loaded, _x(), "chefer", f'text:"{PROMPT}"')
