"""A model is named in the app's captions (the Compare tab's second model, the Graph tab's "divergence against")
with its weights as the command line names them: the demo's are "bundled", never "random"."""

from __future__ import annotations

import pytest

from inspector.core.records.requests import ModelRequest
from inspector.gui.controllers.against import side_name


@pytest.mark.parametrize("source, weights, said", [
    ("demo", None, "demo (bundled)"),
    ("demo-detector", None, "demo-detector (bundled)"),
    ("demo", "/tmp/runs/epoch2.safetensors", "demo (epoch2.safetensors)"),
    ("resnet18", None, "resnet18 (random)"),
    ("resnet18", "pretrained", "resnet18 (pretrained)"),
    ("timm:resnet18", None, "timm:resnet18 (random)"),
    ("hf:/models/vit", None, "hf:/models/vit (the folder's own, pretrained)"),
])
def test_a_side_is_named_with_the_weights_it_loads(source, weights, said):
    assert side_name(ModelRequest(source, weights)) == said
