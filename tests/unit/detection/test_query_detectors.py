"""DETR, Conditional DETR, Deformable DETR, RT-DETR (v1 and v2) and D-FINE from `hf:` folders (tiny configs,
random weights, saved with their image processor): the boxes and scores are transformers' own pipeline's, and the
saliency of `box:K` is the gradient of that detection's score worked out by hand from the plain transformers model."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from query_detectors import FAMILIES, RT_DETRS, model_class, reference, save_detector, scores_by_hand

from inspector.core import load_model
from inspector.core.attribution import attribute
from inspector.core.detection.outputs import detections_of
from inspector.core.detection.thresholds import set_score_threshold
from inspector.core.sources.layers import build_layer_tree

H, W = 40, 60  # the test image; the DETRs' processors resize it to 48 x 72, RT-DETR's and D-FINE's to 64 x 64
RESIZED = {"detr": (48, 72), "conditional_detr": (48, 72), "deformable_detr": (48, 72), "rt_detr": (64, 64),
           "rt_detr_v2": (64, 64), "d_fine": (64, 64)}
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)  # ImageNet's, the processors' defaults


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("query-detectors")
    for family in FAMILIES:
        save_detector(family, root / family)
    return root


@pytest.fixture(scope="module")
def loaded(folders):
    """Each family loaded once through `hf:`, as the CLI and the app load it."""
    return {family: load_model(f"hf:{folders / family}") for family in FAMILIES}


def _image(seed=3):
    return torch.rand(1, 3, H, W, generator=torch.Generator().manual_seed(seed))


@pytest.mark.numeric
@pytest.mark.parametrize("family", FAMILIES)
def test_boxes_and_scores_are_transformers_post_processings(folders, loaded, family):
    loaded = loaded[family]
    set_score_threshold(loaded.module, 0.5)  # as loaded (another test may have changed it)
    assert loaded.task == "detection" and loaded.weights == "pretrained (folder)"
    assert load_model(f"hf:{folders / family}").module.score_thresh == 0.5  # the processor's own default
    x = _image()
    for threshold in (0.0, 0.6):
        set_score_threshold(loaded.module, threshold)
        with torch.no_grad():
            ours = loaded.module(x)[0]
        theirs = reference(family, folders / family, x, threshold)
        assert len(theirs["scores"]) == len(ours["scores"]) and (threshold > 0 or len(ours["scores"]) > 1)
        torch.testing.assert_close(ours["scores"], theirs["scores"], rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(ours["boxes"], theirs["boxes"], rtol=1e-5, atol=1e-4)
        assert torch.equal(ours["labels"], theirs["labels"])
    set_score_threshold(loaded.module, 0.0)
    with torch.no_grad():
        found = detections_of(loaded.module(x), loaded.labels)  # the records the CLI prints and the app draws
    best = reference(family, folders / family, x, 0.0)
    first = int(torch.argmax(best["scores"]))
    assert found[0].score == pytest.approx(float(best["scores"][first]), rel=1e-5)
    assert found[0].box == pytest.approx(best["boxes"][first].tolist(), rel=1e-5, abs=1e-4)
    assert [d.score for d in found] == sorted((d.score for d in found), reverse=True)


@pytest.mark.numeric
@pytest.mark.parametrize("family", FAMILIES)
def test_saliency_of_a_box_is_the_gradient_of_its_score_by_hand(folders, loaded, family):
    loaded = loaded[family]
    set_score_threshold(loaded.module, 0.0)
    x = _image(4)
    # by hand: resize (torch's antialiased bilinear, as the processors' torchvision resize), normalise, the plain
    # model from its folder (no hooks), the k-th best score from its logits
    plain = model_class(family).from_pretrained(str(folders / family)).eval()
    for k in (0, 2):
        found = attribute(loaded, x, "saliency", f"box:{k}")
        xx = x.clone().requires_grad_(True)
        resized = F.interpolate(xx, size=RESIZED[family], mode="bilinear", antialias=True, align_corners=False)
        pixels = (resized - torch.tensor(MEAN)[:, None, None]) / torch.tensor(STD)[:, None, None]
        if family in RT_DETRS:
            pixels = resized  # their processors do not normalise
        scores = scores_by_hand(family, plain(pixel_values=pixels).logits[0])
        scores[k].backward()
        assert found.target == f"box:{k}" and found.target_detection == k
        assert found.detections[k].score == pytest.approx(float(scores[k].detach()), rel=1e-5)
        np.testing.assert_allclose(found.map, xx.grad[0].abs().amax(dim=0).numpy(), rtol=1e-4, atol=1e-9)


def test_random_weights_keep_every_box_and_the_layers_keep_transformers_paths(folders):
    loaded = load_model(f"hf:{folders / 'detr'}", weights="random", seed=0)
    assert loaded.module.score_thresh == 0.0 and loaded.weights == "random"
    assert any("score threshold is 0" in n for n in loaded.notes)
    with torch.no_grad():
        assert len(loaded.module(_image())[0]["scores"]) == 6  # every query, none under the threshold
    tree = build_layer_tree(loaded.module, torch.rand(1, 3, H, W))
    paths = {layer.path for layer in tree}
    assert "model.decoder.layers.0.encoder_attn" in paths and "class_labels_classifier" in paths
    # the app's first ticks: the first convolution, the backbone's last, the class scores (not the box regressor)
    assert tree.default_ticks("detection") == {"model.backbone.model.embedder.embedder.convolution",
                                               "model.backbone.model.encoder.stages.1.layers.0.layer.1.convolution",
                                               "class_labels_classifier"}
