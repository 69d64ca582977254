"""read_concepts and concept_relevance_map: one line for each bad input, the model run once, and the model left
with the hooks it had, after a run and after a refusal."""

from __future__ import annotations

import pytest
import torch
from concept_view_models import image, nmf_dictionary, skipped

from inspector.core.concepts import ConceptError, concept_relevance_map, read_concepts
from inspector.core.common.errors import InputError, SpecError


def hooks_of(model):
    return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) + len(m._backward_hooks)
               for m in model.modules())


@pytest.mark.parametrize("call, error, message", [
    (lambda m, x: read_concepts(m, x, nmf_dictionary(model="resnet18")), ConceptError,
     "The dictionary was learned on model resnet18, not skipped."),
    (lambda m, x: read_concepts(m, x, nmf_dictionary(), layer="stem"), ConceptError,
     "The dictionary is of layer act, not stem."),
    (lambda m, x: read_concepts(m, x, nmf_dictionary(layer="nowhere")), SpecError,
     "The dictionary is of layer nowhere, which this model does not have (see `network-inspector layers`)."),
    (lambda m, x: read_concepts(m, x, nmf_dictionary(channels=5)), ConceptError,
     "The dictionary of act has 5 channels; this activation has 6 (shape (1, 6, 7, 6)): another layer's or model's."),
    (lambda m, x: read_concepts(m, x, nmf_dictionary(), target=3), SpecError,
     "Class index 3 is out of range: the model has 3 outputs."),
    (lambda m, x: read_concepts(m, x, nmf_dictionary(), target=-1), SpecError,
     "The target is a class index (a whole number >= 0), not -1."),
    (lambda m, x: concept_relevance_map(m, x, nmf_dictionary(), None, 0), SpecError,
     "A concept's relevance map is of one concept (its id) for one target (a class index)."),
    (lambda m, x: read_concepts(m, torch.cat([x, x]), nmf_dictionary()), InputError,
     "Concepts are read on one image: an input of shape (1, C, H, W) or (C, H, W), not (2, 3, 7, 6)."),
    (lambda m, x: concept_relevance_map(m, x, nmf_dictionary(), 4, 0), ConceptError,
     "no concept 4: the dictionary has 4 concepts (id 0 to 3)."),
    (lambda m, x: concept_relevance_map(m, x, nmf_dictionary(), 0, 7), SpecError,
     "Class index 7 is out of range: the model has 3 outputs."),
    (lambda m, x: concept_relevance_map(m, x, "concepts/", 0, 0), ConceptError,
     "read_concepts needs a Dictionary (load_dictionary(DIR)), not str."),
])
def test_each_bad_input_is_one_line_and_leaves_no_hook(call, error, message):
    loaded, x = skipped(), image()
    before = hooks_of(loaded.module)
    with pytest.raises(error) as caught:
        call(loaded, x)
    assert str(caught.value) == message
    assert "\n" not in str(caught.value)
    assert hooks_of(loaded.module) == before


def test_one_forward_per_reading_and_per_map_and_no_hook_left():
    loaded, x = skipped(), image()
    calls = []
    handle = loaded.module.register_forward_pre_hook(lambda *_: calls.append(1))
    try:
        read_concepts(loaded, x, nmf_dictionary())
        read_concepts(loaded, x, nmf_dictionary(), target=1)
        concept_relevance_map(loaded, x, nmf_dictionary(), 1, 1)
        assert len(calls) == 3
    finally:
        handle.remove()
    assert hooks_of(loaded.module) == 0
    assert all(p.grad is None for p in loaded.module.parameters())


def test_a_three_dim_image_is_one_image_and_the_weights_stay():
    loaded, x = skipped(), image()
    weights = {k: v.clone() for k, v in loaded.module.state_dict().items()}
    a = read_concepts(loaded, x[0], nmf_dictionary(), target=0)
    b = read_concepts(loaded, x, nmf_dictionary(), target=0)
    torch.testing.assert_close(a.relevance, b.relevance, rtol=0, atol=0)
    for k, v in loaded.module.state_dict().items():
        assert torch.equal(v, weights[k])
