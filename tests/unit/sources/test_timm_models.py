"""`timm:NAME` sources: seeded random weights, the local cache, a weights file, timm's preprocessing and
labels, and captures that match plain PyTorch hooks on the same weights. Offline: nothing downloads."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from safetensors.torch import save_file

from inspector.cli import main
from inspector.core import capture, load_input, load_model
from inspector.core.common.errors import ModelLoadError, SpecError

VIT = "timm:vit_tiny_patch16_224"
HUB_ID = "timm/vit_tiny_patch16_224.augreg_in21k_ft_in1k"  # the default tag's repository


def same_weights(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_random_weights_repeat_with_the_seed():
    a, b, c = load_model(VIT, seed=7), load_model(VIT, seed=7), load_model(VIT, seed=8)
    assert a.seed == 7 and a.weights == "random" and a.kind == "timm" and a.source == VIT
    assert same_weights(a.module, b.module) and not same_weights(a.module, c.module)
    assert load_model(VIT).seed is not None  # picked and recorded


def test_preprocessing_and_labels_come_from_timm():
    loaded = load_model(VIT, seed=0)
    p = loaded.preprocess
    # vit_tiny_patch16_224: 224 input, crop_pct 0.9 -> short side floor(224 / 0.9) = 248, bicubic, mean/std 0.5
    assert (p.resize, p.crop, p.interpolation) == (248, 224, "bicubic")
    assert p.mean == (0.5, 0.5, 0.5) and p.std == (0.5, 0.5, 0.5)
    assert loaded.input_shape == (1, 3, 224, 224)
    assert len(loaded.labels) == 1000 and loaded.labels[0] == "tench" and loaded.labels[1] == "goldfish"


def test_unknown_names_get_suggestions():
    with pytest.raises(ModelLoadError, match=r"timm has no model 'vit_tiny_patch16_22'.*timm:vit_tiny_patch16_224"):
        load_model("timm:vit_tiny_patch16_22")


def _fill_cache(root, hub_id: str, state: dict) -> None:
    """The Hugging Face cache layout huggingface_hub reads: refs/main -> snapshots/<commit>/file."""
    repo = root / ("models--" + hub_id.replace("/", "--"))
    commit = "0123456789abcdef0123456789abcdef01234567"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    save_file({k: v.contiguous() for k, v in state.items()}, str(snapshot / "model.safetensors"))


def test_pretrained_weights_load_from_a_prefilled_cache(tmp_path, monkeypatch):
    reference = load_model(VIT, seed=11).module
    _fill_cache(tmp_path, HUB_ID, reference.state_dict())
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    loaded = load_model(VIT, "pretrained")
    assert loaded.seed is None and loaded.weights.startswith("pretrained")
    assert same_weights(loaded.module, reference)


def test_pretrained_weights_missing_from_the_cache_say_where_to_put_them(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(ModelLoadError) as err:
        load_model(VIT, "pretrained")
    message = str(err.value)
    assert str(tmp_path / "models--timm--vit_tiny_patch16_224.augreg_in21k_ft_in1k") in message
    assert f"huggingface-cli download {HUB_ID} model.safetensors" in message
    with pytest.raises(SpecError, match="seed"):
        load_model(VIT, "pretrained", seed=3)


def test_a_weights_file(tmp_path):
    reference = load_model(VIT, seed=5).module
    path = tmp_path / "vit.safetensors"
    save_file({k: v.contiguous() for k, v in reference.state_dict().items()}, str(path))
    loaded = load_model(VIT, str(path))
    assert loaded.weights == str(path) and loaded.seed is None
    assert same_weights(loaded.module, reference)


def test_captures_match_plain_pytorch_hooks_on_the_same_weights():
    loaded = load_model(VIT, seed=2)
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(0))
    layers = ["blocks.0.attn.qkv", "blocks.5.mlp.fc1", "norm"]
    result = capture(loaded, x, layers=layers, sites="output,grad_output", target=3)
    model = load_model(VIT, seed=2).module  # an independent copy, hooked by hand
    assert same_weights(model, loaded.module)
    outputs, grads = {}, {}
    for name in layers:
        module = model.get_submodule(name)
        module.register_forward_hook(lambda _m, _i, out, name=name: outputs.__setitem__(name, out.detach()))
        module.register_full_backward_hook(lambda _m, _gi, go, name=name: grads.__setitem__(name, go[0].detach()))
    logits = model(x.clone().requires_grad_(True))
    logits[0, 3].backward()
    for name in layers:
        np.testing.assert_allclose(result[f"{name}:output"], outputs[name].numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(result[f"{name}:grad_output"], grads[name].numpy(), rtol=1e-4, atol=1e-7)


def test_cli_captures_a_timm_model_with_a_seed(tmp_path, capsys):
    out = tmp_path / "vit.npz"
    assert main(["capture", "--model", VIT, "--seed", "9", "--input", "sample:star", "--layers", "head",
                 "--sites", "output", "--out", str(out), "--manifest"]) == 0
    manifest = json.loads(out.with_suffix(".json").read_text())
    assert manifest["model"] == VIT and manifest["seed"] == 9
    loaded = load_model(VIT, seed=9)
    x = load_input("sample:star", loaded.preprocess, loaded.input_shape)  # resized 248, cropped 224
    assert x.shape == (1, 3, 224, 224)
    again = capture(loaded, x, layers=["head"], sites="output")
    np.testing.assert_array_equal(np.load(out)["head:output"], again["head:output"])


def test_gradcam_on_a_vit_uses_the_token_grid_and_says_which_layer():
    from inspector.core.attribution import gradcam

    loaded = load_model(VIT, seed=4)
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1))
    found = gradcam(loaded, x, target=7)
    assert found.layer == "blocks.11.norm1" and found.cam.shape == (14, 14) and found.map.shape == (224, 224)
    assert "the last transformer block's first norm" in found.notes[0]
    # by hand, on an independent copy: tokens of norm1 and their gradient, the class token dropped
    model = load_model(VIT, seed=4).module
    kept = {}
    norm = model.get_submodule("blocks.11.norm1")
    norm.register_forward_hook(lambda _m, _i, out: kept.__setitem__("a", out))
    norm.register_full_backward_hook(lambda _m, _gi, go: kept.__setitem__("g", go[0]))
    model(x.clone().requires_grad_(True))[0, 7].backward()
    a = kept["a"].detach()[0, 1:].reshape(14, 14, -1).numpy().astype(np.float64)  # (H, W, C)
    g = kept["g"].detach()[0, 1:].reshape(14, 14, -1).numpy().astype(np.float64)
    alpha = g.mean(axis=(0, 1))  # one weight per channel
    expected = np.maximum((a * alpha).sum(axis=2), 0)
    np.testing.assert_allclose(found.cam, expected, rtol=1e-4, atol=1e-9)
    assert expected.max() > 0
