"""Integrated gradients, occlusion and SmoothGrad of one box: every perturbed copy asked about the object found
on the image (its class, its best-overlapping box), 0 where a copy lost it. Checked against captum on the toy
detector, whose boxes are fixed and whose scores are plain functions of the input, and against a brute-force
SmoothGrad with the same noise."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from captum.attr import IntegratedGradients, Occlusion
from toy_detector import BOXES, ToyDetector

from inspector.core import SpecError
from inspector.core.attribution import attribute


def _x():
    return torch.rand(1, 3, 32, 32, generator=torch.Generator().manual_seed(1))


def _score_of(model, box_index, threshold=0.0):
    """Box `box_index`'s score of each image in a batch, 0 where the model's threshold drops it."""
    def forward(images):
        scores = torch.stack([model.box_scores(image)[box_index] for image in images])
        return scores * (scores >= threshold)
    return forward


@pytest.mark.parametrize("k", [0, 1, 2])
def test_integrated_gradients_of_a_box_equal_captums_of_its_score(k):
    model, x = ToyDetector().eval(), _x()
    found = attribute(model, x, "ig", f"box:{k}", options={"steps": 32})
    i = BOXES.index(found.detections[k].box)
    expected = IntegratedGradients(_score_of(model, i)).attribute(x, baselines=torch.zeros_like(x), n_steps=32,
                                                                  method="gausslegendre")
    np.testing.assert_allclose(found.map, expected[0].detach().numpy(), rtol=1e-4, atol=1e-8)
    assert found.target_detection == k and found.target == f"box:{k}" and found.completeness_gap < 1e-5
    outside = np.ones((32, 32), bool)  # box i's score reads its own pixels, grown by the conv's one
    x0, y0, x1, y1 = (int(v) for v in BOXES[i])
    outside[max(y0 - 1, 0):y1 + 1, max(x0 - 1, 0):x1 + 1] = False
    assert np.abs(found.map[:, outside]).max() == 0


def test_occlusion_of_a_box_counts_the_windows_that_lose_it_as_0():
    model, x = ToyDetector().eval(), _x()
    with torch.no_grad():
        scores = model.box_scores(x[0])
    i = int(scores.argmax())
    model.score_thresh = float(scores[i]) - 2e-3  # occluding part of the box can drop it under the threshold
    found = attribute(model, x, "occlusion", "box:0", options={"window": 4, "stride": 2})
    assert found.detections[0].box == BOXES[i]
    forward = _score_of(model, i, model.score_thresh)
    expected = Occlusion(forward).attribute(x, sliding_window_shapes=(3, 4, 4), strides=(3, 2, 2), baselines=0)
    np.testing.assert_allclose(found.map, expected[0].numpy(), rtol=1e-5, atol=1e-7)
    lost = 0  # the test means something: some windows lose the box, some keep it
    with torch.no_grad():
        for y in range(0, 29, 2):
            for x0 in range(0, 29, 2):
                covered = x.clone()
                covered[..., y:y + 4, x0:x0 + 4] = 0
                lost += float(forward(covered)[0]) == 0.0
    assert 0 < lost < 15 * 15


def test_smoothgrad_of_a_box_averages_each_noisy_copys_gradient_of_that_object():
    model, x = ToyDetector().eval(), _x()
    found = attribute(model, x, "smoothgrad", "box:2", options={"samples": 6, "noise": 0.1, "seed": 4, "batch": 4})
    i = BOXES.index(found.detections[2].box)
    generator = torch.Generator().manual_seed(4)  # the noise as SmoothGrad draws it: one copy after another
    sigma = 0.1 * float(x.max() - x.min())
    maps = []
    for _ in range(6):
        noisy = (x + sigma * torch.randn(x.shape, generator=generator)).requires_grad_(True)
        (grad,) = torch.autograd.grad(model.box_scores(noisy[0])[i], noisy)
        maps.append(grad.abs().amax(dim=1)[0].numpy())
    np.testing.assert_allclose(found.map, np.mean(maps, axis=0), rtol=1e-5, atol=1e-9)
    assert found.target_detection == 2
    unsmoothed = attribute(model, x, "smoothgrad", "box:2", options={"samples": 3, "noise": 0.0})
    np.testing.assert_array_equal(unsmoothed.map, attribute(model, x, "saliency", "box:2").map)


def test_noisy_copies_that_lose_the_box_are_said_and_count_as_0():
    model, x = ToyDetector().eval(), _x()
    with torch.no_grad():
        best = float(model.box_scores(x[0]).max())
    model.score_thresh = best - 1e-4  # all but the best dropped; noise drops it too, now and then
    found = attribute(model, x, "smoothgrad", "box:0", options={"samples": 8, "noise": 0.2, "seed": 0, "of": "guided"})
    lost = [w for w in found.warnings if "noisy copies lost the box" in w]
    assert lost and found.map.shape == (3, 32, 32)
    count = int(lost[0].split()[0])
    assert 0 < count <= 8


def test_a_batch_of_noisy_saliency_copies_counts_those_that_lost_the_box():
    """The batched path (a detector's saliency, many copies a pass) counts its lost copies as the one-by-one
    path does (it said nothing before): the count equals the copies whose score falls under the threshold."""
    model, x = ToyDetector().eval(), _x()
    with torch.no_grad():
        scores = model.box_scores(x[0])
    i = int(scores.argmax())
    model.score_thresh = float(scores[i]) - 1e-4
    found = attribute(model, x, "smoothgrad", "box:0", options={"samples": 8, "noise": 0.2, "seed": 0, "batch": 4})
    generator = torch.Generator().manual_seed(0)
    sigma = 0.2 * float(x.max() - x.min())
    with torch.no_grad():
        lost = sum(float(model.box_scores((x + sigma * torch.randn(x.shape, generator=generator))[0])[i])
                   < model.score_thresh for _ in range(8))
    assert 0 < lost < 8
    assert f"{lost} of 8 noisy copies lost the box (their maps count as 0)" in found.warnings


def test_rollout_still_explains_no_box():
    """The refusal lists what explains this detector's boxes: not Chefer's, which reads a DETR's attention only
    (listed before, and refused when taken)."""
    with pytest.raises(SpecError) as refused:
        attribute(ToyDetector().eval(), _x(), "rollout", "box:0")
    assert str(refused.value) == ("rollout does not explain detections yet; for a box use saliency, gradcam, guided, "
                                  "guided-gradcam, ig, smoothgrad, occlusion, eigencam, drise.")


def test_deletion_and_insertion_of_a_box_follow_its_score_through_the_images():
    """The faithfulness curves of a box's map: its score in each image as the most salient pixels are deleted
    (or inserted), 0 once the image loses the box, worked out here from the toy's own scores."""
    from inspector.core.attribution.scores.faithfulness import pixel_order, scored

    model, x = ToyDetector().eval(), _x()
    with torch.no_grad():
        scores = model.box_scores(x[0])
    model.score_thresh = float(scores.min()) - 1e-3  # every box kept on x; deleting pixels can lose one
    found = attribute(model, x, "saliency", "box:1")
    i = BOXES.index(found.detections[1].box)
    curves = {c.metric: c for c in scored(model, x, found, steps=8).curves}
    order = pixel_order(found.map, (32, 32))
    forward = _score_of(model, i, model.score_thresh)
    for metric in ("deletion", "insertion"):
        expected = []
        for step in range(9):
            mask = torch.zeros(32 * 32, dtype=torch.bool)
            mask[torch.as_tensor(order[:(step * 32 * 32) // 8])] = True
            mask = mask.reshape(1, 1, 32, 32)
            image = torch.where(mask, torch.zeros_like(x), x) if metric == "deletion" else torch.where(mask, x, 0 * x)
            with torch.no_grad():
                expected.append(float(forward(image)[0]))
        np.testing.assert_allclose(curves[metric].scores, expected, rtol=1e-6, atol=1e-9)
        assert "box:1" in curves[metric].score_of
    assert curves["deletion"].scores[0] == pytest.approx(float(scores[i]))
