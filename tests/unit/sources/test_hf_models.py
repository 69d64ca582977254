"""`hf:` sources: tiny transformers models built from configs, saved to temporary folders (no network)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from PIL import Image

transformers = pytest.importorskip("transformers")

from inspector.core import capture, load_input, load_model  # noqa: E402
from inspector.core.common.errors import InspectorError, ModelLoadError, UntrustedCodeError  # noqa: E402
from inspector.core.records.tokens import TokenGrid
from inspector.core.sources.grids import token_grid  # noqa: E402
from inspector.core.sources.trust import carries_code  # noqa: E402

TINY = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, image_size=32,
            patch_size=8)
LABELS = {0: "cat", 1: "dog", 2: "fish"}


def _vit_classifier(folder, **extra):
    config = transformers.ViTConfig(**TINY, num_labels=3, id2label=LABELS, label2id={v: k for k, v in LABELS.items()},
                                    **extra)
    torch.manual_seed(0)
    model = transformers.ViTForImageClassification(config).eval()
    model.save_pretrained(folder)
    transformers.ViTImageProcessor(size={"height": 32, "width": 32}, resample=3).save_pretrained(folder)
    return model


def _picture(width=48, height=40):
    rng = np.random.default_rng(3)
    return Image.fromarray(rng.integers(0, 256, (height, width, 3), dtype=np.uint8))


def test_a_saved_folder_loads_with_its_labels_preprocessing_and_weights(tmp_path):
    reference = _vit_classifier(tmp_path)
    loaded = load_model(f"hf:{tmp_path}")
    assert loaded.kind == "hf" and loaded.labels == ["cat", "dog", "fish"]
    assert loaded.input_shape == (1, 3, 32, 32)
    picture = _picture()
    path = tmp_path / "in.png"
    picture.save(path)
    x = load_input(str(path), loaded.preprocess, loaded.input_shape)
    # the image processor itself (stretch to 32x32, bicubic, mean/std 0.5) is the independent reference
    expected = transformers.AutoImageProcessor.from_pretrained(str(tmp_path))(images=picture, return_tensors="pt")
    difference = (x - expected["pixel_values"]).abs()
    level = 1 / 255 / 0.5  # one grey level after the processor's normalisation
    assert float(difference.max()) <= level + 1e-6  # resampling may round a pixel the other way
    assert float((difference < 1e-5).float().mean()) > 0.99
    with torch.no_grad():
        torch.testing.assert_close(loaded.module(x), reference(pixel_values=x).logits)


def test_captures_equal_plain_pytorch_hooks_on_the_same_weights(tmp_path):
    reference = _vit_classifier(tmp_path)
    x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    seen = {}
    path = "vit.layers.1.mlp.fc1"

    def keep(_module, _args, output):
        seen["out"] = output.detach().clone()
        output.register_hook(lambda g: seen.setdefault("grad", g.detach().clone()))
    handle = reference.get_submodule(path).register_forward_hook(keep)
    logits = reference(pixel_values=x).logits
    logits[0, logits[0].argmax()].backward()
    handle.remove()
    result = capture(load_model(f"hf:{tmp_path}"), x, layers=path, sites="output,grad_output")
    np.testing.assert_array_equal(result[f"{path}:output"], seen["out"].numpy())
    np.testing.assert_allclose(result[f"{path}:grad_output"], seen["grad"].numpy(), rtol=1e-6, atol=1e-7)
    assert result.predictions[0].index == int(logits[0].argmax())


def test_a_named_output_is_what_the_engine_reads(tmp_path):
    config = transformers.ViTConfig(**TINY)
    torch.manual_seed(0)
    model = transformers.ViTModel(config).eval()
    model.save_pretrained(tmp_path)
    x = torch.randn(1, 3, 32, 32)
    expected = model(pixel_values=x)
    pooled = load_model(f"hf:{tmp_path}#pooler_output")
    with torch.no_grad():
        torch.testing.assert_close(pooled.module(x), expected.pooler_output)
        # no logits: the first output (last_hidden_state)
        torch.testing.assert_close(load_model(f"hf:{tmp_path}").module(x), expected.last_hidden_state)
    with pytest.raises(InspectorError, match="no .scores.*last_hidden_state"):
        capture(load_model(f"hf:{tmp_path}#scores"), x, layers="vit.layernorm", sites="output")


def test_random_weights_follow_the_seed(tmp_path):
    _vit_classifier(tmp_path)
    a, b = load_model(f"hf:{tmp_path}", "random", seed=5), load_model(f"hf:{tmp_path}", "random", seed=5)
    c, saved = load_model(f"hf:{tmp_path}", "random", seed=6), load_model(f"hf:{tmp_path}")
    name = "vit.layers.0.attention.q_proj.weight"
    wa, wb, wc, ws = (dict(m.module.named_parameters())[name] for m in (a, b, c, saved))
    assert a.seed == 5 and torch.equal(wa, wb)
    assert not torch.equal(wa, wc) and not torch.equal(wa, ws)
    with pytest.raises(Exception, match="seed is for random weights"):
        load_model(f"hf:{tmp_path}", seed=5)


def test_pickled_weights_need_trust(tmp_path):
    model = _vit_classifier(tmp_path)
    (tmp_path / "model.safetensors").unlink()
    torch.save(model.state_dict(), tmp_path / "pytorch_model.bin")
    assert carries_code(f"hf:{tmp_path}")
    with pytest.raises(UntrustedCodeError, match="pytorch_model.bin.*pickle"):
        load_model(f"hf:{tmp_path}")
    loaded = load_model(f"hf:{tmp_path}", trust=True)
    x = torch.randn(1, 3, 32, 32)
    with torch.no_grad():
        torch.testing.assert_close(loaded.module(x), model(pixel_values=x).logits)


def test_a_config_with_its_own_code_is_refused_without_trust_and_runs_nothing(tmp_path):
    _vit_classifier(tmp_path)
    marker = tmp_path / "ran.txt"
    (tmp_path / "modeling_evil.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    config = json.loads((tmp_path / "config.json").read_text())
    config["auto_map"] = {"AutoModelForImageClassification": "modeling_evil.EvilModel"}
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert carries_code(f"hf:{tmp_path}") and not carries_code("hf:no/such-model")
    with pytest.raises(UntrustedCodeError, match="auto_map"):
        load_model(f"hf:{tmp_path}")
    assert not marker.exists()


def test_an_id_is_read_from_a_prefilled_cache_and_a_missing_one_says_where(tmp_path, monkeypatch):
    cache = tmp_path / "hub"
    snapshot = cache / "models--someone--tiny-vit" / "snapshots" / ("a" * 40)
    reference = _vit_classifier(snapshot)
    (cache / "models--someone--tiny-vit" / "refs").mkdir(parents=True)
    (cache / "models--someone--tiny-vit" / "refs" / "main").write_text("a" * 40)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    loaded = load_model("hf:someone/tiny-vit")
    x = torch.randn(1, 3, 32, 32)
    with torch.no_grad():
        torch.testing.assert_close(loaded.module(x), reference(pixel_values=x).logits)
    with pytest.raises(ModelLoadError) as missing:
        load_model("hf:someone/other-vit")
    assert str(cache / "models--someone--other-vit") in str(missing.value)
    assert "hf download someone/other-vit" in str(missing.value)


def test_token_grids_come_from_the_config_and_the_input_size():
    torch.manual_seed(0)
    vit = transformers.ViTModel(transformers.ViTConfig(**TINY))
    deit = transformers.DeiTModel(transformers.DeiTConfig(**TINY))
    registers = transformers.Dinov2WithRegistersModel(transformers.Dinov2WithRegistersConfig(
        **TINY, num_register_tokens=4))
    assert token_grid(vit) == TokenGrid(4, 4, 1)
    assert token_grid(deit) == TokenGrid(4, 4, 2)  # class and distillation tokens
    assert token_grid(registers, (48, 40)) == TokenGrid(6, 5, 5)  # class + 4 registers, grid of the input
    clip = transformers.CLIPVisionModel(transformers.CLIPVisionConfig(**TINY))
    assert token_grid(clip) == TokenGrid(4, 4, 1)
    convnext = transformers.ConvNextModel(transformers.ConvNextConfig(hidden_sizes=[8, 16], depths=[1, 1], num_stages=2))
    assert token_grid(convnext, (32, 32)) is None  # its maps are (B, C, H, W) already
    with torch.no_grad():
        tokens = registers(pixel_values=torch.randn(1, 3, 48, 40)).last_hidden_state
    assert tokens.shape[1] == 5 + 6 * 5


def test_a_segformer_is_a_segmentation(tmp_path):
    config = transformers.SegformerConfig(num_channels=3, num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1],
                                          hidden_sizes=[8, 16], num_attention_heads=[1, 2], decoder_hidden_size=16,
                                          num_labels=4, patch_sizes=[7, 3], strides=[4, 2], mlp_ratios=[2, 2])
    torch.manual_seed(0)
    transformers.SegformerForSemanticSegmentation(config).eval().save_pretrained(tmp_path)
    transformers.SegformerImageProcessor(size={"height": 64, "width": 64}).save_pretrained(tmp_path)
    loaded = load_model(f"hf:{tmp_path}")
    assert loaded.task == "segmentation" and loaded.input_shape == (1, 3, 64, 64)
    x = torch.randn(1, 3, 64, 64, generator=torch.Generator().manual_seed(2))
    result = capture(loaded, x, layers="decode_head.classifier", sites="output", target="seg:2")
    with torch.no_grad():
        logits = loaded.module(x)
    assert logits.shape == (1, 4, 16, 16)
    assert result.objective == pytest.approx(float(logits[0, 2].sum()), rel=1e-5)


def test_gradcam_on_an_hf_vit_uses_the_last_blocks_first_norm_on_its_grid(tmp_path):
    from inspector.core.attribution import gradcam

    reference = _vit_classifier(tmp_path)
    x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(4))
    cam = gradcam(load_model(f"hf:{tmp_path}"), x)
    assert cam.layer == "vit.layers.1.layernorm_before" and "4x4 patch grid after 1 prefix token" in cam.notes[0]
    seen = {}

    def keep(_module, _args, output):
        seen["a"] = output.detach()
        output.register_hook(lambda g: seen.setdefault("g", g.detach()))
    handle = reference.get_submodule(cam.layer).register_forward_hook(keep)
    logits = reference(pixel_values=x).logits
    logits[0, logits[0].argmax()].backward()
    handle.remove()
    a = seen["a"][0, 1:].reshape(4, 4, 32).permute(2, 0, 1)  # patch tokens as 32 maps of 4 x 4
    g = seen["g"][0, 1:].reshape(4, 4, 32).permute(2, 0, 1)
    expected = torch.relu((g.mean(dim=(1, 2))[:, None, None] * a).sum(0))
    np.testing.assert_allclose(cam.cam, expected.numpy(), rtol=1e-4, atol=1e-6)


def test_a_folder_that_gives_no_input_size_gets_224_and_says_so(tmp_path):
    config = transformers.ResNetConfig(embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], num_labels=2)
    torch.manual_seed(0)
    transformers.ResNetForImageClassification(config).eval().save_pretrained(tmp_path)
    loaded = load_model(f"hf:{tmp_path}")
    assert loaded.input_shape == (1, 3, 224, 224) and loaded.preprocess is None
    assert any("224x224 assumed" in note for note in loaded.notes)
    result = capture(loaded, torch.zeros(loaded.input_shape), layers="classifier.1", sites="output")
    assert result["classifier.1:output"].shape == (1, 2)


def test_placeholder_label_names_are_not_shown_as_labels():
    from inspector.core.sources.hf_models import labels_of

    assert labels_of({"id2label": {"0": "LABEL_0", "1": "LABEL_1"}}) is None
    assert labels_of({"id2label": {"1": "dog", "0": "cat"}}) == ["cat", "dog"]
    assert labels_of({"id2label": {"0": "cat", "2": "dog"}}) is None  # a gap: not every class named


def test_swin_stages_are_maps_of_the_halved_grid(tmp_path):
    """transformers' Swin gives (B, H*W, C) tokens per stage; the grid halves with each patch merging."""
    from inspector.core.attribution import gradcam
    from inspector.core.records.tokens import token_maps

    config = transformers.SwinConfig(image_size=32, patch_size=4, embed_dim=8, depths=[1, 1, 1], num_heads=[1, 2, 4],
                                     window_size=2, num_labels=3)
    torch.manual_seed(0)
    transformers.SwinForImageClassification(config).eval().save_pretrained(tmp_path)
    loaded = load_model(f"hf:{tmp_path}")
    grid = token_grid(loaded.module, (32, 32))
    assert grid == TokenGrid(8, 8, 0, 3) and grid.sizes() == [(8, 8), (4, 4), (2, 2)]
    x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    paths = [f"swin.encoder.layers.{s}.blocks.0.layernorm_before" for s in range(3)]
    result = capture(loaded, x, layers=paths, sites="output")
    for path, (h, w) in zip(paths, grid.sizes()):
        tokens = result[f"{path}:output"]
        assert tokens.shape[1] == h * w
        np.testing.assert_array_equal(token_maps(tokens, grid), tokens[0].reshape(h, w, -1).transpose(2, 0, 1))
    cam = gradcam(loaded, x)
    assert cam.layer == "swin.encoder.layers.2.blocks.0.layernorm_before" and cam.cam.shape == (2, 2)
