"""Tests for the demo detector: scene generator, mAP arithmetic, bundled weights, gradients."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from inspector.demo.detector import INPUT_SIZE, LABELS, DemoDetector, build_detector, load_demo_detector
from inspector.demo.evaluate_detector import (
    HELDOUT_SEED,
    Detections,
    average_precision,
    detect,
    iou,
    mean_average_precision,
)
from inspector.demo.make_samples import DETECT_SCENES, write_samples
from inspector.demo.paths import demo_dir, samples_dir
from inspector.demo.scenes import MAX_SHAPES, MIN_VISIBLE, make_scene
from inspector.demo.shapes import CLASSES, shape_alpha

TEST_SEEDS = range(HELDOUT_SEED + 50_000, HELDOUT_SEED + 50_016)  # held out, and not evaluate_detector's default


@pytest.fixture(scope="module")
def detector() -> DemoDetector:
    torch.set_num_threads(2)
    return load_demo_detector()


def _visible_masks(seed: int) -> list[np.ndarray]:
    """Each shape's visible alpha > 0.5, re-rendered on one big canvas (padded so shapes lie inside)."""
    scene = make_scene(seed)
    size = scene.image.shape[0]
    pad = 100  # more than the largest shape reaches out of the image
    alphas = [shape_alpha(p.label, p.cx + pad, p.cy + pad, p.r, p.angle, np.random.default_rng(p.seed),
                          size + 2 * pad)[pad:pad + size, pad:pad + size] for p in scene.placements]
    masks = []
    for i, alpha in enumerate(alphas):
        visible = alpha.copy()
        for above in alphas[i + 1:]:
            visible *= 1.0 - above
        masks.append(visible > 0.5)
    return masks


def test_scenes_are_deterministic() -> None:
    a, b, c = make_scene(123), make_scene(123), make_scene(124)
    np.testing.assert_array_equal(a.image, b.image)
    np.testing.assert_array_equal(a.boxes, b.boxes)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.placements == b.placements
    assert a.image.shape != c.image.shape or not np.array_equal(a.image, c.image)
    for seed in range(40):
        s = make_scene(seed)
        h, w, ch = s.image.shape
        assert 128 <= h <= 192 and h == w and ch == 3 and s.image.dtype == np.uint8
        assert 1 <= len(s.labels) <= MAX_SHAPES
        assert s.boxes.shape == (len(s.labels), 4) and s.boxes.dtype == np.float32
        assert s.labels.dtype == np.int64 and set(s.labels.tolist()) <= set(range(len(CLASSES)))


def test_boxes_are_tight_bounds_of_the_visible_shapes() -> None:
    n_overlapped = 0
    for seed in range(30):
        scene = make_scene(seed)
        masks = _visible_masks(seed)
        assert [p.label for p in scene.placements] == scene.labels.tolist()
        for i, (mask, box) in enumerate(zip(masks, scene.boxes, strict=True)):
            ys, xs = np.nonzero(mask)
            assert box.tolist() == [xs.min(), ys.min(), xs.max() + 1, ys.max() + 1], (seed, i)
            p = scene.placements[i]
            big = shape_alpha(p.label, 100.0 + p.cx % 1, 100.0 + p.cy % 1, p.r, p.angle,
                              np.random.default_rng(p.seed), 200) > 0.5  # the whole shape, uncovered
            assert mask.sum() >= MIN_VISIBLE * big.sum()
            n_overlapped += mask.sum() < big.sum()
    assert n_overlapped >= 5  # some shapes really are partly covered (or cut by the border)


def test_average_precision_by_hand() -> None:
    # 2 objects; ranked detections hit, miss, hit: precision 1, 1/2, 2/3 at recall 1/2, 1/2, 1
    # -> interpolated precision 1 up to recall 1/2 and 2/3 up to 1: AP = 0.5 * 1 + 0.5 * 2/3
    assert average_precision([0.9, 0.8, 0.7], [True, False, True], 2) == pytest.approx(5 / 6)
    assert average_precision([0.7, 0.9, 0.8], [True, True, False], 2) == pytest.approx(5 / 6)  # ranks by score
    assert average_precision([0.9, 0.8], [True, True], 3) == pytest.approx(2 / 3)  # one object never found
    assert average_precision([0.9, 0.8], [False, True], 1) == pytest.approx(0.5)
    assert average_precision([], [], 2) == 0.0
    assert np.isnan(average_precision([0.5], [False], 0))


def test_mean_average_precision_by_hand() -> None:
    truths = [(np.array([[0, 0, 10, 10], [20, 20, 30, 30]], dtype=float), np.array([0, 1])),
              (np.array([[0, 0, 10, 10]], dtype=float), np.array([0]))]
    detections = [
        Detections(np.array([[0, 0, 10, 10], [0, 0, 10, 9], [20, 20, 30, 30], [20, 20, 30, 30]], dtype=float),
                   np.array([0.9, 0.8, 0.7, 0.6]), np.array([0, 0, 0, 1])),  # hit, duplicate, wrong class, hit
        Detections(np.array([[5, 0, 15, 10]], dtype=float), np.array([0.95]), np.array([0])),  # IoU 1/3
    ]
    assert iou(detections[1].boxes[0], truths[1][0])[0] == pytest.approx(1 / 3)
    mean_ap, per_class = mean_average_precision(detections, truths, num_classes=3)
    # class 0 ranked: miss, hit, miss, miss with 2 objects -> precision 1/2 at recall 1/2 -> AP 1/4
    assert per_class[0] == pytest.approx(0.25)
    assert per_class[1] == pytest.approx(1.0)
    assert np.isnan(per_class[2])  # no ground truth: left out of the mean
    assert mean_ap == pytest.approx(0.625)


def test_build_detector_is_deterministic() -> None:
    torch.manual_seed(3)
    a = build_detector().state_dict()
    torch.manual_seed(3)
    b = build_detector().state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_bundled_detector_finds_held_out_objects(detector: DemoDetector) -> None:
    assert (demo_dir() / "detector.safetensors").is_file() and (demo_dir() / "detector.json").is_file()
    assert not detector.model.training
    assert detector.labels == LABELS == CLASSES and detector.input_size == INPUT_SIZE
    scenes = [make_scene(seed) for seed in TEST_SEEDS]
    found = n_objects = false_alarms = 0
    for scene, det in zip(scenes, detect(detector.model, [s.image for s in scenes]), strict=True):
        shown = det.scores >= detector.score_threshold
        boxes, labels = det.boxes[shown], det.labels[shown]
        matched = np.zeros(len(boxes), dtype=bool)
        for box, label in zip(scene.boxes, scene.labels, strict=True):
            n_objects += 1
            ok = (labels == label) & (iou(box.astype(np.float64), boxes.astype(np.float64)) >= 0.5) & ~matched
            if ok.any():
                found += 1
                matched[np.flatnonzero(ok)[0]] = True
        false_alarms += int((~matched).sum())
    assert n_objects >= 30
    assert found >= 0.9 * n_objects, (found, n_objects)
    assert false_alarms <= 0.15 * n_objects, (false_alarms, n_objects)


def test_batch_tensor_gives_the_same_detections_in_input_pixels(detector: DemoDetector) -> None:
    image = make_scene(TEST_SEEDS[0]).image[:128, :150]
    x = torch.from_numpy(image).permute(2, 0, 1).float() / 255
    with torch.inference_mode():
        one = detector.model([x])[0]
        batch = detector.model(torch.stack([x, x.flip(2)]))
    assert len(batch) == 2 and len(one["boxes"]) > 0
    torch.testing.assert_close(batch[0]["boxes"], one["boxes"])
    torch.testing.assert_close(batch[0]["scores"], one["scores"])
    assert torch.equal(batch[0]["labels"], one["labels"])
    assert one["boxes"][:, [0, 2]].max() <= 150 and one["boxes"][:, [1, 3]].max() <= 128


def test_gradient_flows_from_a_score_to_the_backbone_and_input(detector: DemoDetector) -> None:
    model = detector.model
    model.zero_grad(set_to_none=True)
    x = (torch.from_numpy(make_scene(TEST_SEEDS[1]).image).permute(2, 0, 1).float() / 255).requires_grad_()
    try:
        out = model([x])
        out[0]["scores"][0].backward()
        first_conv = model.backbone.stem[0].weight
        assert first_conv.grad is not None and first_conv.grad.abs().sum() > 0
        assert x.grad is not None and x.grad.abs().sum() > 0
    finally:
        model.zero_grad(set_to_none=True)


def test_detection_samples_match_the_generator(tmp_path) -> None:
    write_samples(tmp_path)
    for name, seed in DETECT_SCENES.items():
        bundled = np.asarray(Image.open(samples_dir() / f"{name}.png").convert("RGB"))
        np.testing.assert_array_equal(bundled, np.asarray(Image.open(tmp_path / f"{name}.png")))
        np.testing.assert_array_equal(bundled, make_scene(seed).image)
        assert 2 <= len(make_scene(seed).labels) <= 4
