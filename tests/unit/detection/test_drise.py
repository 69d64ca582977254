"""D-RISE against a brute-force recomputation: the same seeded masks made one at a time, each masked image
run alone, its weight the best IoU x same-class score worked out with plain Python over the detections."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from toy_detector import BOXES, LABELS, ToyDetector

from inspector.core import SpecError
from inspector.core.attribution import attribute
from inspector.core.attribution.drise import drise, make_masks


def _iou(a, b):
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = w * h
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def _brute_force(model, x, which, masks, cell, probability, seed):
    """The paper's sum, one mask at a time (RISE's masks drawn in the same order from the same seed)."""
    generator = torch.Generator().manual_seed(seed)
    h, w = x.shape[-2:]
    rows, cols = math.ceil(h / cell), math.ceil(w / cell)
    total = np.zeros((h, w))
    for i in range(masks):  # each mask's cells, then its shift, one mask after another
        grid = (torch.rand(1, 1, rows, cols, generator=generator) < probability).float()
        dy, dx = torch.randint(0, cell, (2,), generator=generator).tolist()
        up = F.interpolate(grid, size=((rows + 1) * cell, (cols + 1) * cell), mode="bilinear",
                           align_corners=False)[0, 0]
        mask = up[dy:dy + h, dx:dx + w]
        with torch.no_grad():
            found = model([(x[0] * mask)])[0]
        weight = max([_iou(BOXES[which], tuple(b)) * s
                      for b, s, label in zip(found["boxes"].tolist(), found["scores"].tolist(), found["labels"].tolist())
                      if label == LABELS[which]] or [0.0])
        total += weight * mask.double().numpy()
    raw = total / masks
    return raw, (raw - raw.min()) / (raw.max() - raw.min())


@pytest.mark.parametrize("k", [0, 2])
def test_drise_equals_a_brute_force_recomputation(k):
    model, x = ToyDetector().eval(), torch.rand(1, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        scores = model.box_scores(x[0])
    which = int(torch.argsort(scores, descending=True)[k])
    found = drise(model, x, f"box:{k}", masks=40, cell=4, probability=0.5, seed=11, batch=7)
    raw, scaled = _brute_force(model, x, which, 40, 4, 0.5, 11)
    assert found.method == "drise" and found.target_detection == k and found.target_index == LABELS[which]
    np.testing.assert_allclose(found.cam, raw, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(found.map, scaled, rtol=1e-5, atol=1e-6)
    assert dict(found.details)["seed"] == 11 and dict(found.details)["masks"] == 40


def test_masks_are_smooth_in_range_and_repeat_with_their_seed():
    one = make_masks(6, (30, 20), 5, 0.5, torch.Generator().manual_seed(3))
    two = make_masks(6, (30, 20), 5, 0.5, torch.Generator().manual_seed(3))
    assert one.shape == (6, 1, 30, 20) and torch.equal(one, two)
    assert float(one.min()) >= 0 and float(one.max()) <= 1 and 0 < float(((one > 0) & (one < 1)).float().mean())
    assert not torch.equal(one, make_masks(6, (30, 20), 5, 0.5, torch.Generator().manual_seed(4)))


def test_drise_in_batches_equals_one_by_one_and_reports_progress():
    model, x = ToyDetector().eval(), torch.rand(1, 3, 32, 32, generator=torch.Generator().manual_seed(2))
    steps = []
    batched = drise(model, x, "box:1", masks=30, cell=8, seed=5, batch=8, progress=lambda d, t: steps.append((d, t)))
    single = drise(model, x, "box:1", masks=30, cell=8, seed=5, batch=1)
    np.testing.assert_allclose(batched.cam, single.cam, rtol=1e-6)
    assert steps == [(7, 30), (15, 30), (22, 30), (30, 30)]  # equal passes, as every method: 30 * i // 4


def test_drise_errors_are_one_line():
    model, x = ToyDetector().eval(), torch.rand(1, 3, 32, 32)
    with pytest.raises(SpecError, match="box:0 to box:2"):
        drise(model, x, "box:3", masks=2)
    with pytest.raises(SpecError, match="probability of keeping a cell is above 0 and at most 1"):
        drise(model, x, "box:0", masks=2, probability=0)
    with pytest.raises(SpecError, match="masks is a whole number, at least 1"):
        drise(model, x, "box:0", masks=0)
    with pytest.raises(SpecError, match="cell .40 pixels. is larger than the input"):
        drise(model, x, "box:0", masks=2, cell=40)
    classifier = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 32 * 32, 4)).eval()
    with pytest.raises(SpecError, match="D-RISE explains a detector's boxes; this model detects nothing"):
        attribute(classifier, x, "drise", "box:0", options={"masks": 2})
    from inspector.core.common.errors import RunCancelled

    with pytest.raises(RunCancelled):
        drise(model, x, "box:0", masks=4, batch=1, cancel=lambda: True)
