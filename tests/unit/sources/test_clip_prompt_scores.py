"""Deletion and insertion of a map explaining a `text:` target score the images by that target: the
prompts' score by hand (transformers' own `logits_per_image`) at both ends of each curve."""

from __future__ import annotations

import pytest
import torch

transformers = pytest.importorskip("transformers")

from inspector.core import attribute, load_model  # noqa: E402

from clip_folders import clip_folder, reference_logits, siglip_folder  # noqa: E402


@pytest.mark.numeric
@pytest.mark.parametrize("family", ["clip", "siglip"])
def test_deletion_and_insertion_score_the_prompts(family, tmp_path):
    model, tok = (clip_folder if family == "clip" else siglip_folder)(tmp_path)
    loaded = load_model(f"hf:{tmp_path}")
    x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(4))
    target = 'text:"a dog"|"a car"'
    with torch.no_grad():  # the first prompt's softmax probability among the two, by hand
        at_x, at_zero = (float(torch.softmax(reference_logits(model, tok, family == "siglip", ["a dog", "a car"], image),
                                             dim=1)[0, 0]) for image in (x, torch.zeros_like(x)))
    scored = attribute(loaded, x, "saliency", target, metrics=("deletion", "insertion"), metric_steps=4)
    deletion, insertion = scored.curves
    assert deletion.scores[0] == pytest.approx(at_x, rel=1e-4) and deletion.scores[-1] == pytest.approx(at_zero, rel=1e-4)
    assert insertion.scores[0] == pytest.approx(at_zero, rel=1e-4) and insertion.scores[-1] == pytest.approx(at_x, rel=1e-4)
    assert deletion.score_of == f"the objective ({target})"
