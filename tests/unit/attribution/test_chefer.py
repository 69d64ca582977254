"""Chefer's relevance (inspector.core.attribution.chefer): equal to the reference code's rule computed by hand
on a two-block ViT written out in the test (explicit attention), on a transformers ViT (its eager attention
probabilities) and on timm's distilled DeiT (its unfused attention); class-specific where rollout is not."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from scipy.stats import spearmanr
from torch import nn

from inspector.core.attribution.chefer import chefer
from inspector.core.attribution.entry import attribute
from inspector.core.common.errors import SpecError

transformers = pytest.importorskip("transformers")
timm = pytest.importorskip("timm")


def _x(seed: int = 1) -> torch.Tensor:
    return torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(seed))


def _two_block_vit() -> nn.Module:
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2,
                                                 hidden_dim=16, mlp_dim=32, num_classes=5).eval()
    nn.init.normal_(model.heads.head.weight)  # torchvision starts the head at zero
    return model


def _by_hand(attentions, grads, prefix: int = 1) -> torch.Tensor:
    """The reference's rule: R = I; per block R += mean_heads(clamp(dA * A, min=0)) @ R; the class token's row."""
    relevance = torch.eye(attentions[0].shape[-1], dtype=torch.float64)
    for a, g in zip(attentions, grads):
        relevance = relevance + (g[0] * a[0].detach()).double().clamp(min=0).mean(dim=0) @ relevance
    return relevance[0, prefix:].reshape(4, 4)


def _written_out(model, x):
    """torchvision's VisionTransformer forward written out, the attention explicit: (logits, probabilities)."""
    tokens = model.conv_proj(x).flatten(2).transpose(1, 2)
    tokens = torch.cat([model.class_token.expand(1, -1, -1), tokens], dim=1) + model.encoder.pos_embedding
    found = []
    for block in model.encoder.layers:
        mha, h = block.self_attention, block.self_attention.num_heads
        q, k, v = F.linear(block.ln_1(tokens), mha.in_proj_weight, mha.in_proj_bias).chunk(3, dim=-1)
        q, k, v = (t.reshape(1, 17, h, 16 // h).transpose(1, 2) for t in (q, k, v))
        probs = (q @ k.transpose(-2, -1) / (16 // h) ** 0.5).softmax(dim=-1)
        found.append(probs)
        joined = (probs @ v).transpose(1, 2).reshape(1, 17, 16)
        tokens = tokens + mha.out_proj(joined)
        tokens = tokens + block.mlp(block.ln_2(tokens))
    return model.heads(model.encoder.ln(tokens)[:, 0]), found


@pytest.mark.numeric
@pytest.mark.parametrize("target", [0, 3])
def test_equals_the_rule_by_hand_on_a_two_block_vit_written_out(target):
    model, x = _two_block_vit(), _x()
    logits, probs = _written_out(model, x)
    with torch.no_grad():
        torch.testing.assert_close(logits, model(x), rtol=1e-5, atol=1e-6)  # the written-out forward is the model's
    grads = torch.autograd.grad(logits[0, target], probs)
    expected = _by_hand(probs, grads)
    found = chefer(model, x, target)
    assert found.cam.shape == (4, 4) and found.target_index == target and expected.max() > 0.05
    np.testing.assert_allclose(found.cam, expected.float().numpy(), rtol=1e-5, atol=1e-7)
    assert found.map.shape == (32, 32) and found.map.min() == 0 and found.map.max() == pytest.approx(1.0)


@pytest.mark.numeric
def test_a_transformers_vit_by_hand_with_its_top_class():
    torch.manual_seed(0)
    config = transformers.ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                                    image_size=32, patch_size=8, num_labels=5, attn_implementation="eager")
    model, x = transformers.ViTForImageClassification(config).eval(), _x(2)
    seen = model(pixel_values=x, output_attentions=True)
    top = int(seen.logits[0].argmax())
    expected = _by_hand(seen.attentions, torch.autograd.grad(seen.logits[0, top], seen.attentions))
    found = chefer(model, x)
    assert found.target_index == top
    np.testing.assert_allclose(found.cam, expected.float().numpy(), rtol=1e-5, atol=1e-8)


@pytest.mark.numeric
def test_timms_distilled_deit_reads_the_class_tokens_row_past_both_prefix_tokens():
    torch.manual_seed(0)
    kwargs = dict(img_size=32, patch_size=8, embed_dim=32, depth=2, num_heads=4, num_classes=5)
    model = timm.create_model("deit_tiny_distilled_patch16_224", pretrained=False, **kwargs).eval()
    x = _x(3)
    found = chefer(model, x, 4)
    probs = []
    for block in model.blocks:  # timm's unfused path: its attn_drop takes the probabilities
        block.attn.fused_attn = False
        block.attn.attn_drop.register_forward_hook(lambda _m, args, _out: probs.append(args[0]))
    score = model(x)[0, 4]
    expected = _by_hand(probs, torch.autograd.grad(score, probs), prefix=2)
    assert expected.max() > 1e-4
    np.testing.assert_allclose(found.cam, expected.float().numpy(), rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("method", ["chefer", "legrad"])
def test_two_classes_give_two_maps_where_rollout_gives_one(method):
    model, x = _two_block_vit(), _x()
    ours = [attribute(model, x, method, c).cam.ravel() for c in (0, 3)]
    rolled = [attribute(model, x, "rollout", c).cam.ravel() for c in (0, 3)]
    assert spearmanr(*rolled).statistic == pytest.approx(1.0)  # class-agnostic: the same map
    assert spearmanr(*ours).statistic < 0.6  # 0.45 (chefer) and -0.44 (legrad) on this model and input


def test_other_models_are_one_line_errors(small_net):
    with pytest.raises(SpecError, match=r"^Chefer's relevance explains vision transformers .* no patch grid"):
        attribute(small_net, torch.rand(1, 3, 8, 8), "chefer")
    pooled = timm.models.VisionTransformer(img_size=32, patch_size=8, embed_dim=32, depth=2, num_heads=4,
                                           num_classes=5, global_pool="avg", class_token=False).eval()
    said = (r"^Chefer's relevance is read from the class token's row; this model has no class token \(its head pools "
            r"the patches\)\. Use LeGrad or attention rollout\.$")
    with pytest.raises(SpecError, match=said):
        attribute(pooled, _x(), "chefer")
