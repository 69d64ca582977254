"""Each box explained alone (`each_box`, `attribute --each-box`, the app's "Each box"): which boxes, each map
against plain autograd of that box's score on the toy detector, and the tiled picture's layout and pixels."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from toy_detector import BOXES, ToyDetector

from inspector.core.detection.picture import boxes_to_explain
from inspector.core.common.errors import SpecError
from inspector.core.attribution.per_box import CAPTION, GAP, each_box, tiled
from inspector.core.records.detections import Detection


def _found(*scores):
    return [Detection((0.0, 0.0, 1.0, 1.0), 1, "a", s) for s in scores]


def test_the_boxes_explained_are_those_shown_from_the_score_the_best_most():
    assert boxes_to_explain(_found(0.9, 0.7, 0.6, 0.3)) == [0, 1, 2]  # shown from 0.5, as the app starts
    assert boxes_to_explain(_found(0.9, 0.7, 0.6, 0.3), 0.65) == [0, 1]
    assert boxes_to_explain(_found(0.9, 0.7, 0.6, 0.3), 0.0, most=2) == [0, 1]
    low = _found(*(0.04 - 0.001 * k for k in range(12)))  # random weights: nothing reaches 0.5, the best 10 shown
    assert boxes_to_explain(low) == list(range(9)) and boxes_to_explain(low, most=20) == list(range(10))
    assert boxes_to_explain(_found(0.3), 0.5) == []


@pytest.fixture
def toy():
    return ToyDetector().eval(), torch.rand(1, 3, 32, 32, generator=torch.Generator().manual_seed(5))


def _grown(box) -> np.ndarray:
    """The pixels a box's score reads (the conv's 3x3 window grows the box by one pixel)."""
    x0, y0, x1, y1 = (int(v) for v in box)
    inside = np.zeros((32, 32), bool)
    inside[max(0, y0 - 1):y1 + 1, max(0, x0 - 1):x1 + 1] = True
    return inside


def test_each_box_explains_every_box_shown_alone_each_equal_to_autograd_of_its_score(toy):
    det, x = toy
    maps = each_box(det, x, "saliency", min_score=0.0)
    scores = det.box_scores(x[0]).detach()
    order = torch.argsort(scores, descending=True).tolist()
    assert [m.target_detection for m in maps] == [0, 1, 2] and [m.target for m in maps] == ["box:0", "box:1", "box:2"]
    for rank, found in enumerate(maps):
        i = order[rank]
        xx = x.clone().requires_grad_(True)
        det.box_scores(xx[0])[i].backward()
        np.testing.assert_allclose(found.map, xx.grad[0].abs().amax(dim=0).numpy(), rtol=1e-5, atol=1e-12)
        assert found.detections[rank].box == BOXES[i]
        assert found.map[~_grown(BOXES[i])].max() == 0 and found.map[_grown(BOXES[i])].max() > 0  # no other box
    assert [m.target_detection for m in each_box(det, x, "saliency", min_score=0.0, most=2)] == [0, 1]


def test_each_box_refuses_what_explains_no_box_and_a_score_no_box_reaches(toy):
    det, x = toy
    with pytest.raises(SpecError, match="same for every box"):
        each_box(det, x, "eigencam", layer="conv")
    with pytest.raises(SpecError, match=r"No detection scores 0.99 or more \(3 found, the best 0\.\d+\)"):
        each_box(det, x, "saliency", min_score=0.99)
    with pytest.raises(SpecError, match="at least 1"):
        each_box(det, x, "saliency", most=0)
    with pytest.raises(SpecError, match="detection model"):
        each_box(torch.nn.Conv2d(3, 2, 1), x, "saliency")


def test_the_tiled_picture_puts_each_map_in_its_cell_with_its_box_and_nothing_else(toy):
    det, _ = toy
    x = torch.rand(1, 3, 96, 96, generator=torch.Generator().manual_seed(6))  # the toy's boxes all lie above row 31
    maps = each_box(det, x, "saliency", min_score=0.0)
    picture = (np.random.default_rng(0).random((96, 96, 3)) * 255).astype(np.uint8)
    sheet = tiled(picture, maps)
    assert sheet.shape == (2 * (96 + CAPTION) + GAP, 2 * 96 + GAP, 3)  # 3 maps: 2 x 2, the fourth cell empty
    assert (sheet[96 + CAPTION + GAP:, 96 + GAP:] == 255).all() and (sheet[:, 96:96 + GAP] == 255).all()
    # where a map is 0 (below its box) its cell shows the picture half blended with jet's dark blue (0, 0, 128)
    cold = np.floor(0.5 * picture.astype(np.float64) + 0.5 * np.array([0.0, 0.0, 128.0]) + 0.5).astype(np.uint8)
    for cell, found in enumerate(maps):
        top, left = (cell // 2) * (96 + CAPTION + GAP) + CAPTION, (cell % 2) * (96 + GAP)
        tile = sheet[top:top + 96, left:left + 96]
        np.testing.assert_array_equal(tile[36:], cold[36:])
        x0, y0, x1, y1 = (int(v) for v in found.detections[found.target_detection].box)
        # its own box in yellow and its tag (above it, or inside at its top), nothing else
        ys, xs = np.nonzero((tile == (255, 212, 0)).all(axis=-1))
        assert len(ys) > 2 * (x1 - x0) and xs.min() >= x0 - 1
        assert ys.min() >= y0 - 16 and ys.max() <= max(y1 + 1, y0 + 16)
        assert not (tile[y0 + 2:y1 - 2, x0 + 2:x1 - 2] == cold[y0 + 2:y1 - 2, x0 + 2:x1 - 2]).all()  # heat inside
