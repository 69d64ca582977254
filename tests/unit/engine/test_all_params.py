"""`--layers all --sites params` captures every parameter's gradient, including those owned by modules
that are not running leaves (ViT's class_token and pos_embedding, in_proj_weight, ConvNeXt's layer_scale,
Swin's relative position bias table, a root-level parameter); each is selectable by its path. Checked
against plain autograd."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torchvision
from torch import nn
from torchvision.models.convnext import CNBlockConfig

from inspector.core import SpecError, capture
from inspector.core.sources.loaded import LoadedModel

pytestmark = pytest.mark.numeric  # CI runs these again under another oneDNN instruction set


class RootParam(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor([1.5, -0.5, 2.0]))
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x * self.scale)


def _models():
    torch.manual_seed(0)
    vit = torchvision.models.VisionTransformer(image_size=32, patch_size=16, num_layers=1, num_heads=2,
                                               hidden_dim=8, mlp_dim=16, num_classes=3)
    convnext = torchvision.models.convnext.ConvNeXt([CNBlockConfig(8, None, 2)], num_classes=3)
    swin = torchvision.models.SwinTransformer(patch_size=[4, 4], embed_dim=8, depths=[2], num_heads=[2],
                                              window_size=[4, 4], num_classes=3)
    return {
        "vit": (vit, (1, 3, 32, 32), ["class_token", "encoder.pos_embedding",
                                      "encoder.layers.encoder_layer_0.self_attention.in_proj_weight",
                                      "encoder.layers.encoder_layer_0.self_attention.out_proj.weight"]),
        "convnext": (convnext, (1, 3, 32, 32), ["features.1.0.layer_scale"]),
        "swin": (swin, (1, 3, 32, 32), ["features.1.0.attn.relative_position_bias_table"]),
        "root": (RootParam(), (1, 3), ["scale"]),
    }


MODELS = _models()


def _autograd(module: nn.Module, x: torch.Tensor) -> dict[str, np.ndarray]:
    module.zero_grad(set_to_none=True)
    module(x).sum().backward()
    grads = {f"{name}:grad": p.grad.numpy().copy() for name, p in module.named_parameters()}
    module.zero_grad(set_to_none=True)
    return grads


@pytest.mark.parametrize("name", list(MODELS))
def test_all_params_is_every_parameter(name):
    module, shape, owned_by_non_leaves = MODELS[name]
    module.eval()
    loaded = LoadedModel(module, name, input_shape=shape)
    x = torch.randn(shape, generator=torch.Generator().manual_seed(1))
    result = capture(loaded, x, "all", "params", target="sum")
    expected = _autograd(module, x)
    got = {k: v for k, v in result.arrays().items() if k.endswith(":grad") and k != "input:grad"}
    assert sorted(got) == sorted(expected)
    for key, grad in expected.items():
        np.testing.assert_allclose(got[key], grad, rtol=1e-5, atol=1e-7, err_msg=key)
    for param in owned_by_non_leaves:
        assert f"{param}:grad" in got
    # each is selectable by its own path, alone
    one = capture(loaded, x, owned_by_non_leaves[0], "params", target="sum")
    assert sorted(one.captures) == [f"{owned_by_non_leaves[0]}:grad"]
    np.testing.assert_allclose(one[f"{owned_by_non_leaves[0]}:grad"], expected[f"{owned_by_non_leaves[0]}:grad"],
                               rtol=1e-5, atol=1e-7)


def test_a_glob_over_parameter_paths():
    module, shape, _ = MODELS["vit"]
    loaded = LoadedModel(module, "vit", input_shape=shape)
    result = capture(loaded, torch.zeros(shape), "*_embedding,class_token", "params", target="sum")
    assert sorted(result.captures) == ["class_token:grad", "encoder.pos_embedding:grad"]


def test_a_parameter_path_without_params_is_still_no_layer():
    module, shape, _ = MODELS["vit"]
    loaded = LoadedModel(module, "vit", input_shape=shape)
    with pytest.raises(SpecError, match="No layer named 'class_token'"):
        capture(loaded, torch.zeros(shape), "class_token", "output", target="sum")


def test_an_edit_on_a_non_leaf_parameter_applies():
    module, shape, _ = MODELS["convnext"]
    loaded = LoadedModel(module, "convnext", input_shape=shape)
    result = capture(loaded, torch.ones(shape), "all", "params", edits=["features.1.0.layer_scale:grad=scale(3)"],
                     target="sum")
    plain = capture(loaded, torch.ones(shape), "all", "params", target="sum")
    key = "features.1.0.layer_scale:grad"
    np.testing.assert_allclose(result[key], plain[key] * 3, rtol=1e-6)
    assert result.edits == ["features.1.0.layer_scale:grad=scale(k=3)"] and result.warnings == []
