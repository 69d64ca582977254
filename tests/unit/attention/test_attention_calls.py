"""Issue 25, item 3: the pass that works out attention probabilities beside the model is not a call of
the model. With the `attention` site, qkv/q_norm/k_norm (timm) and q_proj/k_proj (transformers) are
captured once per forward, as `layers` counts them; an edit of qkv still reaches the probabilities."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from inspector.core import capture, load_model
from inspector.core.sources.loaded import tree_of


@pytest.fixture(scope="module")
def vit():
    return load_model("timm:vit_tiny_patch16_224", seed=3)


def test_timm_submodules_are_captured_once_per_call(vit):
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(4))
    parts = ["blocks.1.attn", "blocks.1.attn.qkv", "blocks.1.attn.q_norm", "blocks.1.attn.k_norm"]
    result = capture(vit, x, layers=parts, sites="output,attention", target=1)
    plain = capture(vit, x, layers=parts, sites="output", target=1)
    calls = {l.path: l.calls for l in tree_of(vit).layers}
    assert all(calls[p] == 1 for p in parts)  # what `layers` says
    assert sorted(k for k in result.captures if "#" in k) == []
    assert sorted(result.captures) == sorted([*plain.captures, "blocks.1.attn:attention"])
    for key in plain.captures:  # the capture of each call is the model's own call, not the pass beside it
        np.testing.assert_array_equal(result[key], plain[key])


def test_an_edit_of_qkv_reaches_the_probabilities_worked_out_beside_the_model(vit):
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(5))
    result = capture(vit, x, layers=["blocks.0.attn"], sites="attention",
                     edits=["blocks.0.attn.qkv:output=scale(0)"], target=1)
    probs = result["blocks.0.attn:attention"]  # q = k = 0 (timm's q_norm/k_norm are Identity here): uniform
    n = probs.shape[-1]
    np.testing.assert_allclose(probs, np.full_like(probs, 1 / n), rtol=1e-6)
    assert not any("#" in k for k in result.captures)


def test_transformers_q_proj_and_k_proj_are_captured_once():
    transformers = pytest.importorskip("transformers")
    from inspector.core.sources.hf_models import _return_tensor
    from inspector.core.sources.loaded import LoadedModel

    torch.manual_seed(0)
    model = transformers.ViTModel(transformers.ViTConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                                                         intermediate_size=64, image_size=32, patch_size=8,
                                                         attn_implementation="eager")).eval()
    _return_tensor(model, "last_hidden_state")
    loaded = LoadedModel(model, "test", input_shape=(1, 3, 32, 32), kind="hf")
    attention = next(p for p, m in model.named_modules() if type(m).__name__ == "ViTAttention")
    inner = next(p for p, m in model.named_modules() if p.startswith(attention) and hasattr(m, "q_proj"))
    parts = [inner, f"{inner}.q_proj", f"{inner}.k_proj", f"{inner}.v_proj"]
    result = capture(loaded, torch.rand(1, 3, 32, 32), layers=parts, sites="output,attention", target="sum")
    assert not any("#" in k for k in result.captures)
    assert f"{inner}:attention" in result.captures and f"{inner}.q_proj:output" in result.captures
