"""A map that explains no class (EigenCAM, rollout) is scored against the class the model predicts (issue 39):
its curves are that class's probability, in [0, 1], and a model with no classes says it cannot be scored."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from inspector.core import load_input, load_model
from inspector.core.attribution import attribute
from inspector.core.attribution.scores.faithfulness import scored
from inspector.core.common.errors import SpecError


def test_eigencam_is_scored_against_the_predicted_class():
    model = load_model("demo")
    x = load_input("sample:star", model.preprocess, model.input_shape)
    found = scored(model, x, attribute(model, x, "eigencam"), steps=4)
    with torch.no_grad():
        p = torch.softmax(model.module(x).double(), dim=1)[0]  # the predicted class, by hand
    predicted = int(p.argmax())
    for curve in found.curves:
        assert curve.score_of == f"probability of class {predicted}"
        assert np.all((curve.scores >= 0) & (curve.scores <= 1)) and 0 <= curve.auc <= 1
    deletion = {c.metric: c for c in found.curves}["deletion"]
    assert deletion.scores[0] == pytest.approx(float(p[predicted]), rel=1e-5)  # nothing deleted yet: p(x)
    assert any(f"class {predicted} ({model.labels[predicted]})" in note and "predicts" in note
               for note in found.notes)


def test_a_class_agnostic_map_of_a_model_with_no_classes_cannot_be_scored():
    torch.manual_seed(0)
    module = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                           nn.Linear(4, 1)).eval()  # one output: no class to pick
    x = torch.rand(1, 3, 8, 8)
    found = attribute(module, x, "eigencam", layer="1")
    with pytest.raises(SpecError, match="explains no class and this model.s output \\(shape \\(1, 1\\)\\) has no classes"):
        scored(module, x, found, steps=4)
