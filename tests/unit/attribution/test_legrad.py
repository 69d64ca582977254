"""LeGrad (inspector.core.attribution.legrad): equal to torch-cam 0.5's LeGrad on a torchvision ViT, and to
by-hand computations of the reference code's rule (one autograd.grad per block at its eager attention
probabilities) on a CLIP vision tower under a classifier head, a transformers ViT, timm's distilled DeiT and a
timm ViT with an attention-pool (MAP) head, all tiny with random weights."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from inspector.core.attribution.entry import attribute
from inspector.core.attribution.legrad import legrad
from inspector.core.common.errors import SpecError

transformers = pytest.importorskip("transformers")
timm = pytest.importorskip("timm")

TINY = dict(hidden_size=32, num_hidden_layers=3, num_attention_heads=4, intermediate_size=64, image_size=32,
            patch_size=8)


def _x(seed: int = 1) -> torch.Tensor:
    return torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(seed))


def _torchvision_vit(layers: int = 3) -> nn.Module:
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=layers, num_heads=2,
                                                 hidden_dim=16, mlp_dim=32, num_classes=5).eval()
    nn.init.normal_(model.heads.head.weight)  # torchvision starts the head at zero: every gradient would be 0
    return model


def _by_hand(attentions, scores) -> torch.Tensor:
    """The reference's rule: per block, ReLU(d s^l / d A^l) averaged over heads and queries, the class token's
    column left out; the mean over blocks, on the 4x4 grid."""
    maps = [torch.autograd.grad(s, a, retain_graph=True)[0].clamp(min=0).mean(dim=(1, 2))[0]
            for a, s in zip(attentions, scores)]
    keys = torch.stack(maps).mean(dim=0)
    return keys[keys.shape[0] - 16:].reshape(4, 4)


@pytest.mark.numeric
@pytest.mark.parametrize("blocks", [None, 2])
def test_equals_torchcams_legrad_on_a_torchvision_vit(blocks):
    from torchcam.methods import LeGrad

    model, x = _torchvision_vit(), _x()
    found = legrad(model, x, 3, blocks)
    layers = list(model.encoder.layers)[-(blocks or 3):]
    with LeGrad(model, layers) as extractor:
        expected = extractor(3, model(x), normalized=False)[0][0]
    assert found.cam.shape == (4, 4) and expected.abs().max() > 1e-3
    np.testing.assert_allclose(found.cam, expected.numpy(), rtol=1e-5, atol=1e-8)
    up = F.interpolate(expected[None, None], size=(32, 32), mode="bilinear", align_corners=False)[0, 0]
    np.testing.assert_allclose(found.map, ((up - up.min()) / (up.max() - up.min())).numpy(), atol=1e-5)
    assert found.target_index == 3 and dict(found.details)["blocks"] == (blocks or 3)


class _ClipClassifier(nn.Module):
    """A classifier made of a CLIP vision tower and a linear head on its pooled output."""

    def __init__(self):
        super().__init__()
        self.tower = transformers.CLIPVisionModel(transformers.CLIPVisionConfig(**TINY, attn_implementation="eager"))
        self.head = nn.Linear(32, 5)

    def forward(self, x):
        return self.head(self.tower(pixel_values=x).pooler_output)


@pytest.mark.numeric
def test_a_clip_vision_tower_under_a_head_by_hand():
    torch.manual_seed(0)
    model, x = _ClipClassifier().eval(), _x()
    found = legrad(model, x, 3)
    seen = model.tower(pixel_values=x, output_attentions=True, output_hidden_states=True)
    scores = [model.head(model.tower.post_layernorm(h.mean(dim=1)))[0, 3] for h in seen.hidden_states[1:]]
    expected = _by_hand(seen.attentions, scores)
    assert expected.abs().max() > 1e-3
    np.testing.assert_allclose(found.cam, expected.numpy(), rtol=1e-5, atol=1e-8)


@pytest.mark.numeric
def test_a_transformers_vit_by_hand_with_its_top_class():
    torch.manual_seed(0)
    model = transformers.ViTForImageClassification(transformers.ViTConfig(**TINY, num_labels=5,
                                                                          attn_implementation="eager")).eval()
    x = _x(2)
    seen = model(pixel_values=x, output_attentions=True, output_hidden_states=True)
    top = int(seen.logits[0].argmax())
    scores = [model.classifier(model.vit.layernorm(h.mean(dim=1)))[0, top] for h in seen.hidden_states[1:]]
    found = legrad(model, x)  # top1: the class the model's own output ranks first
    assert found.target_index == top
    np.testing.assert_allclose(found.cam, _by_hand(seen.attentions, scores).numpy(), rtol=1e-5, atol=1e-8)


def _timm_attention_probs(model) -> list:
    """Each block's probabilities as timm's unfused path forms them (its attn_drop's input), in the graph."""
    found = []
    for block in model.blocks:
        block.attn.fused_attn = False
        block.attn.attn_drop.register_forward_hook(lambda _m, args, _out: found.append(args[0]))
    return found


@pytest.mark.numeric
def test_timms_distilled_deit_by_hand_both_heads_read_the_mean():
    torch.manual_seed(0)
    kwargs = dict(img_size=32, patch_size=8, embed_dim=32, depth=3, num_heads=4, num_classes=5)
    model = timm.create_model("deit_tiny_distilled_patch16_224", pretrained=False, **kwargs).eval()
    x = _x(3)
    found = legrad(model, x, 1)
    reference = timm.create_model("deit_tiny_distilled_patch16_224", pretrained=False, **kwargs).eval()
    reference.load_state_dict(model.state_dict())
    probs, outputs = _timm_attention_probs(reference), []
    for block in reference.blocks:
        block.register_forward_hook(lambda _m, _a, out: outputs.append(out))
    reference(x)
    means = [reference.norm(z.mean(dim=1)) for z in outputs]
    scores = [(reference.head(m) + reference.head_dist(m))[0, 1] / 2 for m in means]  # timm's eval head
    expected = _by_hand(probs, scores)  # keys: class and distillation tokens, then the 16 patches
    assert expected.abs().max() > 1e-5  # timm's small initial weights: small gradients
    np.testing.assert_allclose(found.cam, expected.numpy(), rtol=1e-5, atol=1e-10)


@pytest.mark.numeric
def test_an_attention_pool_head_takes_the_gradient_at_the_pool_by_hand():
    torch.manual_seed(0)
    model = timm.models.VisionTransformer(img_size=32, patch_size=8, embed_dim=32, depth=3, num_heads=4,
                                          num_classes=5, global_pool="map", class_token=False).eval()
    x = _x(4)
    found = legrad(model, x, 2)
    outputs = []
    handles = [b.register_forward_hook(lambda _m, _a, out: outputs.append(out)) for b in model.blocks]
    model(x)
    for handle in handles:
        handle.remove()
    pool, probs, scores = model.attn_pool, [], []
    for z in outputs:  # timm's AttentionPoolLatent, written out, with its probabilities formed
        tokens = model.norm(z)
        q = pool.q(pool.latent).reshape(1, 1, 4, 8).transpose(1, 2)
        k, v = pool.kv(tokens).reshape(1, 16, 2, 4, 8).permute(2, 0, 3, 1, 4)
        attention = ((pool.q_norm(q) * pool.scale) @ pool.k_norm(k).transpose(-2, -1)).softmax(dim=-1)
        pooled = pool.proj((attention @ v).transpose(1, 2).reshape(1, 1, 32))
        pooled = (pooled + pool.mlp(pool.norm(pooled)))[:, 0]
        probs.append(attention)
        scores.append(model.head(model.fc_norm(pooled))[0, 2])
    maps = [torch.autograd.grad(s, a, retain_graph=True)[0].clamp(min=0).mean(dim=1)[0, 0] for a, s in
            zip(probs, scores)]  # heads averaged, the one latent query's row over the 16 patches
    expected = torch.stack(maps).mean(dim=0).reshape(4, 4)
    assert expected.abs().max() > 1e-4
    np.testing.assert_allclose(found.cam, expected.numpy(), rtol=1e-5, atol=1e-9)
    assert "attention pool attn_pool" in found.notes[0]


def test_the_model_keeps_its_hooks_and_its_output():
    model, x = _torchvision_vit(), _x()
    with torch.no_grad():
        before = model(x)
    hooks = [len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules()]
    legrad(model, x, 0)
    assert [len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules()] == hooks
    with torch.no_grad():
        torch.testing.assert_close(model(x), before, rtol=0, atol=0)


def test_other_models_and_bad_blocks_are_one_line_errors(small_net):
    with pytest.raises(SpecError, match=r"^LeGrad explains vision transformers .* this model has no patch grid"):
        attribute(small_net, torch.rand(1, 3, 8, 8), "legrad")
    model = _torchvision_vit()
    with pytest.raises(SpecError, match=r"^LeGrad: blocks is 1 to 3 \(this model's blocks\), not 4\.$"):
        attribute(model, _x(), "legrad", 0, options={"blocks": 4})
