"""The attention site and zero_heads on transformers' ViT-family attention (tiny models from configs)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

from inspector.core import capture  # noqa: E402
from inspector.core.attention.site import supports_attention  # noqa: E402
from inspector.core.sources.hf_models import _return_tensor  # noqa: E402
from inspector.core.sources.loaded import LoadedModel  # noqa: E402

pytestmark = pytest.mark.numeric  # CI runs these again under another oneDNN instruction set

TINY = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, image_size=32,
            patch_size=8)


def _models():
    """(name, eager model, the attention paths) for each family the attention site covers."""
    torch.manual_seed(0)
    vit = transformers.ViTModel(transformers.ViTConfig(**TINY, attn_implementation="eager"))
    deit = transformers.DeiTModel(transformers.DeiTConfig(**TINY, attn_implementation="eager"))
    dino = transformers.Dinov2WithRegistersModel(transformers.Dinov2WithRegistersConfig(
        **TINY, num_register_tokens=2, attn_implementation="eager"))
    clip = transformers.CLIPVisionModel(transformers.CLIPVisionConfig(**TINY, attn_implementation="eager"))
    for model in (vit, deit, dino, clip):
        model.eval()
        paths = [p for p, m in model.named_modules() if p and supports_attention(m)]
        yield type(model).__name__, model, paths


def _loaded(model) -> LoadedModel:
    """The model as the hf: loader gives it: returning its last_hidden_state (after the plain runs)."""
    _return_tensor(model, "last_hidden_state")
    return LoadedModel(model, "test", input_shape=(1, 3, 32, 32), kind="hf")


@pytest.mark.parametrize("name", ["ViTModel", "DeiTModel", "Dinov2WithRegistersModel", "CLIPVisionModel"])
def test_probabilities_equal_the_eager_attention_weights_and_outputs_stay(name):
    model, paths = next((m, p) for n, m, p in _models() if n == name)
    assert len(paths) == 2
    x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        plain = model(pixel_values=x, output_attentions=True)
    result = capture(_loaded(model), x, layers=",".join(paths), sites="output,attention", target="sum")
    for path, expected in zip(paths, plain.attentions):
        np.testing.assert_allclose(result[f"{path}:attention"], expected.numpy(), rtol=1e-5, atol=1e-6)
    first = plain.last_hidden_state  # what the model returns is unchanged by the capture
    np.testing.assert_array_equal(result.output, first.numpy())


def test_zero_heads_equals_a_manual_computation_without_those_heads():
    model, paths = next((m, p) for n, m, p in _models() if n == "ViTModel")
    attention = model.get_submodule(paths[0])
    x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(2))
    seen = {}
    handle = attention.register_forward_pre_hook(lambda m, args: seen.setdefault("in", args[0].detach().clone()))
    with torch.no_grad():
        probs = model(pixel_values=x, output_attentions=True).attentions[0]  # (1, 4, N, N)
    handle.remove()
    v = attention.v_proj(seen["in"]).view(1, -1, 4, 8).transpose(1, 2)  # (1, heads, N, 8)
    per_head = probs @ v
    per_head[:, [1, 3]] = 0
    expected = attention.o_proj(per_head.transpose(1, 2).reshape(1, -1, 32))
    loaded = _loaded(model)
    result = capture(loaded, x, layers=f"{paths[0]}.o_proj", sites="output", target="sum",
                     edits=[f"{paths[0]}:attention=zero_heads([1, 3])"])
    np.testing.assert_allclose(result[f"{paths[0]}.o_proj:output"], expected.detach().numpy(), rtol=1e-5, atol=1e-6)
    unedited = capture(loaded, x, layers=f"{paths[0]}.o_proj", sites="output", target="sum")
    assert not np.allclose(unedited[f"{paths[0]}.o_proj:output"], expected.detach().numpy(), atol=1e-4)
