"""CLIP and SigLIP from `hf:` folders with `text:` targets, against transformers' own `logits_per_image` and
gradients worked out by hand on the transformers model itself."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

from inspector.core import attribute, capture, load_model  # noqa: E402
from inspector.core.common.errors import ModelLoadError, SpecError  # noqa: E402
from inspector.core.session.file import Session, session_from_dict  # noqa: E402

from clip_folders import CLIP_TOKENS, clip_folder, reference_logits, siglip_folder  # noqa: E402

PROMPTS = ("a photo of a dog", "a cat", "a red car")


@pytest.fixture(scope="module", params=["clip", "siglip"])
def family(request, tmp_path_factory):
    """(family, the folder's transformers model, its tokenizer, the model as loaded from hf:folder)."""
    folder = tmp_path_factory.mktemp(request.param)
    model, tok = (clip_folder if request.param == "clip" else siglip_folder)(folder)
    return request.param, model, tok, load_model(f"hf:{folder}")


def _image(seed=1):
    return torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(seed))


def _score(family, model, tok, prompts, x):
    """The score by hand: one prompt's logit (CLIP) or its sigmoid (SigLIP); several: the first one's softmax."""
    logits = reference_logits(model, tok, family == "siglip", prompts, x)
    if len(prompts) > 1:
        return torch.softmax(logits, dim=1)[:, 0]
    return torch.sigmoid(logits[:, 0]) if family == "siglip" else logits[:, 0]


def test_the_model_is_its_image_tower(family):
    name, _model, _tok, loaded = family
    assert loaded.task == "image-text" and loaded.input_shape == (1, 3, 32, 32)
    paths = [p for p, _ in loaded.module.named_modules() if p]
    assert paths and all(p.startswith(("vision_model", "visual_projection")) for p in paths)
    assert ("visual_projection" in paths) == (name == "clip")


@pytest.mark.numeric
@pytest.mark.parametrize("prompts", [PROMPTS[:1], PROMPTS], ids=["one prompt", "three prompts"])
def test_the_objective_is_transformers_score(family, prompts):
    name, model, tok, loaded = family
    x = _image()
    target = "text:" + "|".join(f'"{p}"' for p in prompts)
    result = capture(loaded, x, layers="vision_model.embeddings.patch_embedding", target=target)
    with torch.no_grad():
        expected = _score(name, model, tok, prompts, x)
    assert result.target == target and result.target_index is None
    assert result.objective == pytest.approx(float(expected[0]), rel=1e-5, abs=1e-6)
    if name == "siglip" and len(prompts) == 1:  # the sigmoid of the logit, bias included: a probability
        assert 0 < result.objective < 1
    if len(prompts) > 1:  # the predictions: the prompts by their probability among them (zero-shot)
        with torch.no_grad():
            probabilities = torch.softmax(reference_logits(model, tok, name == "siglip", prompts, x), dim=1)[0]
        order = probabilities.argsort(descending=True).tolist()
        assert [p.label for p in result.predictions] == [prompts[i] for i in order]
        assert [p.probability for p in result.predictions] == pytest.approx(probabilities[order].tolist(), rel=1e-5)


def test_without_prompts_there_are_no_predictions(family):
    result = capture(family[3], _image(), layers="vision_model.embeddings.patch_embedding", target="sum")
    assert result.predictions == [] and result.output.shape == (1, 8 if family[0] == "clip" else 16)


@pytest.mark.numeric
@pytest.mark.parametrize("prompts", [PROMPTS[:1], PROMPTS], ids=["one prompt", "three prompts"])
def test_saliency_is_the_gradient_of_the_score_by_hand(family, prompts):
    name, model, tok, loaded = family
    x = _image(2)
    found = attribute(loaded, x, "saliency", "text:" + "|".join(f'"{p}"' for p in prompts))
    given = x.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(_score(name, model, tok, prompts, given).sum(), given)
    np.testing.assert_allclose(found.map, grad.abs().amax(dim=1)[0].numpy(), rtol=1e-4, atol=1e-7)


@pytest.mark.numeric
def test_gradcam_at_a_vision_layer_is_gradcam_by_hand(family):
    name, model, tok, loaded = family
    x = _image(3)
    layer = "vision_model.encoder.layers.1.layer_norm1"
    found = attribute(loaded, x, "gradcam", 'text:"a dog"')
    assert found.layer == layer  # the last block's first norm, on the 4x4 patch grid
    kept = {}
    norm = model.vision_model.encoder.layers[1].layer_norm1
    handle = norm.register_forward_hook(lambda _m, _a, out: kept.setdefault("out", out))
    try:
        score = _score(name, model, tok, ["a dog"], x).sum()
        (grad,) = torch.autograd.grad(score, kept["out"])
    finally:
        handle.remove()
    prefix = 1 if name == "clip" else 0  # CLIP's class token; SigLIP has none
    acts, grads = (t[0, prefix:].reshape(4, 4, -1).permute(2, 0, 1).detach() for t in (kept["out"], grad))
    cam = torch.relu((grads.mean(dim=(1, 2))[:, None, None] * acts).sum(dim=0))
    np.testing.assert_allclose(found.cam, cam.numpy(), rtol=1e-4, atol=1e-7)


@pytest.mark.numeric
def test_occlusion_ig_and_smoothgrad_use_the_prompts_score(family):
    name, model, tok, loaded = family
    x = _image(4)
    target = 'text:"a dog"|"a car"'
    with torch.no_grad():
        at_x = float(_score(name, model, tok, ["a dog", "a car"], x)[0])
        at_zero = float(_score(name, model, tok, ["a dog", "a car"], torch.zeros_like(x))[0])
    # one window over the whole image: its drop is the score on x less the score on the (zero) baseline
    occluded = attribute(loaded, x, "occlusion", target, options={"window": 32, "stride": 32})
    np.testing.assert_allclose(occluded.map, at_x - at_zero, rtol=1e-4, atol=1e-6)
    ig = attribute(loaded, x, "ig", target, options={"steps": 64})
    assert dict(ig.details)["f(x) - f(baseline)"] == pytest.approx(at_x - at_zero, rel=1e-4)
    assert float(ig.map.sum()) == pytest.approx(at_x - at_zero, rel=0.05)  # completeness, on the prompts' score
    smooth = attribute(loaded, x, "smoothgrad", target, options={"samples": 3, "seed": 0})
    assert smooth.target == target and smooth.map.shape == (32, 32) and smooth.map.max() > 0


def test_the_text_tower_runs_once_a_prompt(family):
    _name, _model, _tok, loaded = family
    whole = loaded.module._whole
    calls = []
    handle = whole.text_model.register_forward_hook(lambda *_: calls.append(1))
    try:
        loaded.module._texts.clear()
        x = _image(5)
        attribute(loaded, x, "saliency", 'text:"a dog"|"a cat"')
        attribute(loaded, x, "gradcam", 'text:"a cat"|"a dog"|"a car"')
        attribute(loaded, x, "ig", 'text:"a car"', options={"steps": 4})
    finally:
        handle.remove()
    assert len(calls) == 3  # a dog, a cat, a car: once each


@pytest.mark.numeric
def test_a_prompt_longer_than_the_text_tower_reads_is_cut_and_said(tmp_path):
    model, tok = clip_folder(tmp_path)
    loaded = load_model(f"hf:{tmp_path}")
    long = "a photograph of a dog on a beach"  # a token a letter: 27 with its two marks, CLIP_TOKENS read
    x = _image(6)
    found = attribute(loaded, x, "saliency", f'text:"{long}"')
    assert found.notes == (f"The prompt {long!r} is 27 tokens; the text tower reads {CLIP_TOKENS}: it was cut to "
                           f"its first {CLIP_TOKENS}.",)
    result = capture(loaded, x, layers="visual_projection", target=f'text:"{long}"')
    assert result.warnings == list(found.notes)
    with torch.no_grad():
        assert result.objective == pytest.approx(float(reference_logits(model, tok, False, [long], x)[0, 0]), rel=1e-5)


def test_a_text_target_on_a_model_without_a_text_tower_is_refused_before_it_runs():
    loaded = load_model("demo")
    ran = []
    loaded.module.register_forward_pre_hook(lambda *_: ran.append(1))
    for call in (lambda: attribute(loaded, torch.zeros(loaded.input_shape), "saliency", 'text:"a dog"'),
                 lambda: capture(loaded, torch.zeros(loaded.input_shape), layers="conv1", target="text:a dog")):
        with pytest.raises(SpecError, match="this model has no text tower") as caught:
            call()
        assert "\n" not in str(caught.value)
    assert ran == []


def test_a_folder_without_a_tokenizer_loads_and_refuses_prompts(tmp_path):
    clip_folder(tmp_path, tokenizer=False)
    loaded = load_model(f"hf:{tmp_path}")
    assert any("tokenizer could not be read" in note for note in loaded.notes)
    with pytest.raises(SpecError, match="tokenizer could not be read"):
        attribute(loaded, _image(), "saliency", 'text:"a dog"')
    assert attribute(loaded, _image(), "saliency", "sum").map.shape == (32, 32)  # the image tower still runs


def test_an_output_name_is_refused(tmp_path):
    clip_folder(tmp_path)
    with pytest.raises(ModelLoadError, match="takes no #image_embeds"):
        load_model(f"hf:{tmp_path}#image_embeds")


@pytest.mark.numeric
def test_moving_the_model_moves_its_text_tower(tmp_path):
    model, tok = clip_folder(tmp_path)
    loaded = load_model(f"hf:{tmp_path}")
    x = _image(7)
    attribute(loaded, x, "saliency", 'text:"a dog"')  # a text embedding kept in float32
    loaded.module.to(torch.float64)
    result = capture(loaded, x.double(), layers="visual_projection", target='text:"a dog"')
    with torch.no_grad():
        expected = reference_logits(model.double(), tok, False, ["a dog"], x.double())[0, 0]
    assert result.objective == pytest.approx(float(expected), rel=1e-12)


def test_a_session_keeps_a_text_target():
    target = 'text:"a \\"big\\" dog"|"a cat"'
    session = Session(model="hf:./clip", input="sample:star", target=target, layers=("visual_projection",))
    again = session_from_dict(json.loads(json.dumps(session.to_dict())))
    assert again.target == target
    assert again.run_request().spec.target.prompts == ('a "big" dog', "a cat")
