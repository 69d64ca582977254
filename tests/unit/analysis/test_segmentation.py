"""Segmentation: torchvision segmentation models by name, `seg:CLASS[@X0,Y0,X1,Y1]` targets checked
against torch.autograd.grad of the objective built by hand, and per-class pixel shares as predictions."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from inspector.core import capture, load_model
from inspector.core.common.errors import SpecError
from inspector.core.target.objective import Target, objective, parse_target
from inspector.core.engine.runner import predictions

pytestmark = pytest.mark.numeric  # CI runs these again under another oneDNN instruction set


def test_seg_targets_parse_and_print():
    assert parse_target("seg:15") == Target("seg", 15)
    assert parse_target("seg:3@10,20,110,220") == Target("seg", 3, (10, 20, 110, 220))
    assert str(parse_target("seg:3@10,20,110,220")) == "seg:3@10,20,110,220"
    for bad, says in (("seg:person", "class index"), ("seg:1@1,2,3", "four whole numbers"),
                      ("seg:1@5,5,5,9", "X0 < X1")):
        with pytest.raises(SpecError, match=says):
            parse_target(bad)


def test_a_segmentation_model_loads_by_name_with_voc_labels_and_no_backbone_download():
    loaded = load_model("lraspp_mobilenet_v3_large", seed=3)
    assert loaded.kind == "torchvision" and loaded.seed == 3
    assert loaded.labels[0] == "__background__" and loaded.labels[15] == "person" and len(loaded.labels) == 21
    assert loaded.preprocess.resize == 520 and loaded.preprocess.crop is None and loaded.input_shape == (1, 3, 520, 520)
    again = load_model("lraspp_mobilenet_v3_large", seed=3)
    assert all(torch.equal(a, b) for a, b in zip(loaded.module.state_dict().values(),
                                                 again.module.state_dict().values()))


def test_seg_target_gradients_match_autograd_of_the_hand_built_objective():
    loaded = load_model("lraspp_mobilenet_v3_large", seed=5)
    x = torch.randn(1, 3, 96, 128, generator=torch.Generator().manual_seed(2))
    result = capture(loaded, x, layers=["classifier.high_classifier"], sites="output,grad_output",
                     target="seg:15@8,16,72,80", input_grad=True)
    xi = x.clone().requires_grad_(True)
    out = loaded.module(xi)["out"]
    assert out.shape == (1, 21, 96, 128)  # at the input's size: the box is in the same pixels
    (expected,) = torch.autograd.grad(out[:, 15, 16:80, 8:72].sum(), xi)
    np.testing.assert_allclose(result["input:grad"], expected.numpy(), rtol=1e-4, atol=1e-6)
    assert result.objective == pytest.approx(float(out[:, 15, 16:80, 8:72].sum().detach()), rel=1e-5)
    assert result.target == "seg:15@8,16,72,80" and result.target_index == 15
    whole = capture(loaded, x, layers=[], target="seg:15", input_grad=True)
    (all_pixels,) = torch.autograd.grad(loaded.module(xi)["out"][:, 15].sum(), xi)
    np.testing.assert_allclose(whole["input:grad"], all_pixels.numpy(), rtol=1e-4, atol=1e-6)


class HalfRes(nn.Module):
    """(B, 3, H, W) -> (B, 2, H/2, W/2): class 1's logit at output pixel (i, j) is 100 * i + j."""

    def forward(self, x):
        h, w = x.shape[-2] // 2, x.shape[-1] // 2
        grid = (100 * torch.arange(h)[:, None] + torch.arange(w)[None, :]).float()
        return torch.stack([torch.zeros(h, w), grid])[None] + 0 * x.mean()


def test_a_box_in_input_pixels_is_scaled_to_a_smaller_output():
    out = HalfRes()(torch.zeros(1, 3, 8, 8))
    # input box x 2..6, y 0..4 -> output columns 1..3, rows 0..2: sum of 100 i + j for i in 0,1 and j in 1,2
    value, index, _ = objective(out, Target("seg", 1, (2, 0, 6, 4)), (8, 8))
    assert float(value) == (0 + 1) + (0 + 2) + (100 + 1) + (100 + 2) and index == 1
    with pytest.raises(SpecError, match="outside"):
        objective(out, Target("seg", 1, (20, 20, 30, 30)), (8, 8))
    with pytest.raises(SpecError, match="out of range"):
        objective(out, Target("seg", 2), (8, 8))
    with pytest.raises(SpecError, match="classes, H, W"):
        objective(torch.zeros(1, 5), Target("seg", 1))


def test_predictions_of_a_segmentation_are_pixel_shares():
    logits = torch.zeros(1, 3, 2, 2)
    logits[0, 2, 0, :] = 5.0  # top row: class 2
    logits[0, 1, 1, 0] = 5.0  # one pixel: class 1; the last pixel ties at 0 -> class 0 (first)
    found = predictions(logits, ["bg", "cat", "dog"])
    assert found[0].label == "dog" and found[0].probability == 0.5 and found[0].logit == pytest.approx(10.0 / 4)
    assert {p.label: p.probability for p in found} == {"dog": 0.5, "bg": 0.25, "cat": 0.25}


def test_auto_picks_the_class_with_most_pixels_and_class_targets_say_use_seg():
    out = HalfRes()(torch.zeros(1, 3, 8, 8))  # class 1 wins every pixel but (0, 0), a tie won by class 0
    value, index, resolved = objective(out, Target("auto"), (8, 8))
    assert resolved == Target("seg", 1) and index == 1 and float(value) == float(out[0, 1].sum())
    with pytest.raises(SpecError, match="Use seg:CLASS"):
        objective(out, Target("top1"), (8, 8))
    assert load_model("lraspp_mobilenet_v3_large", seed=0).task == "segmentation"
    assert load_model("demo").task == "classification"


def test_torchvision_builders_get_what_the_preprocessing_needs():
    """The sweep found vit_h_14 failing: its default weights take 518 x 518, its builder 224 unless told."""
    import torchvision

    from inspector.core.sources.torchvision_models import (
        builder_options,
        torchvision_preprocess,
    )

    prep = torchvision_preprocess(torchvision.models.get_model_weights("vit_h_14").DEFAULT)
    assert prep.crop == 518 and builder_options("vit_h_14", prep, False) == {"image_size": 518}
    prep16 = torchvision_preprocess(torchvision.models.get_model_weights("vit_b_16").DEFAULT)
    assert builder_options("vit_b_16", prep16, False) == {}
    assert builder_options("fcn_resnet50", prep16, True) == {"weights_backbone": None}


def test_a_segmentation_result_carries_its_class_map():
    out = HalfRes()
    result = capture_module(out)
    assert result.classes.shape == (4, 4) and result.classes.dtype == np.int16
    np.testing.assert_array_equal(result.classes, np.argmax(result.output[0], axis=0))
    assert capture(load_model("demo"), torch.zeros(1, 3, 64, 64), layers=[]).classes is None  # a classifier


def capture_module(module):
    from inspector.core.engine.runner import run
    from inspector.core.runspec import RunSpec

    return run(module, torch.zeros(1, 3, 8, 8), RunSpec.make([], "output", (), "sum"))
