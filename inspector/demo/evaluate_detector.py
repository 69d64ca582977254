"""Held-out mAP@0.5 of the demo detector: ``python -m inspector.demo.evaluate_detector``.

The held-out scenes use seeds from :data:`HELDOUT_SEED` up, far from the seeds
training uses (``train_detector.scene_seed``). AP is VOC-style: detections of a
class are ranked by score over all images, each is a true positive when it
overlaps a not-yet-matched ground-truth box of its class with IoU >= 0.5 (the
best-overlapping one), and AP is the area under the precision/recall curve with
all-point interpolation. mAP averages AP over the classes that have ground truth.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from inspector.demo.detector import LABELS, load_demo_detector
from inspector.demo.scenes import Scene, make_scene

HELDOUT_SEED = 900_000_000  # first held-out scene seed


@dataclass(frozen=True)
class Detections:
    """One image's detections as numpy arrays: boxes Nx4 (x0, y0, x1, y1), scores N, labels N."""

    boxes: np.ndarray
    scores: np.ndarray
    labels: np.ndarray


def iou(box: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """IoU of one box ``(x0, y0, x1, y1)`` with each row of ``boxes`` (Nx4)."""
    w = np.clip(np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0]), 0, None)
    h = np.clip(np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1]), 0, None)
    inter = w * h
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    return inter / (area + areas - inter)


def average_precision(scores: Sequence[float], is_true: Sequence[bool], n_ground_truth: int) -> float:
    """VOC AP with all-point interpolation of one class.

    ``scores`` and ``is_true`` describe every detection of the class (true
    positive or not); ``n_ground_truth`` counts its ground-truth objects. Ties in
    score keep the given order. Returns NaN when there is no ground truth.
    """
    if n_ground_truth == 0:
        return float("nan")
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    tp = np.asarray(is_true, dtype=bool)[order]
    cum_tp = np.cumsum(tp)
    recall = cum_tp / n_ground_truth
    precision = cum_tp / np.arange(1, len(tp) + 1)
    # precision envelope: at each recall, the best precision at that recall or beyond
    rec = np.concatenate([[0.0], recall, [1.0]])
    prec = np.concatenate([[0.0], precision, [0.0]])
    prec = np.maximum.accumulate(prec[::-1])[::-1]
    steps = np.flatnonzero(rec[1:] != rec[:-1])
    return float(np.sum((rec[steps + 1] - rec[steps]) * prec[steps + 1]))


def mean_average_precision(detections: Sequence[Detections], truths: Sequence[tuple[np.ndarray, np.ndarray]],
                           num_classes: int, iou_threshold: float = 0.5) -> tuple[float, list[float]]:
    """mAP and per-class AP (NaN for a class without ground truth) over a set of images.

    ``truths[i]`` is image i's ``(boxes Nx4, labels N)``.
    """
    scores: list[list[float]] = [[] for _ in range(num_classes)]
    hits: list[list[bool]] = [[] for _ in range(num_classes)]
    n_truth = [0] * num_classes
    for det, (gt_boxes, gt_labels) in zip(detections, truths, strict=True):
        for c in range(num_classes):
            gt = np.asarray(gt_boxes, dtype=np.float64).reshape(-1, 4)[np.asarray(gt_labels) == c]
            n_truth[c] += len(gt)
            taken = np.zeros(len(gt), dtype=bool)
            mine = np.flatnonzero(np.asarray(det.labels) == c)
            for k in mine[np.argsort(-np.asarray(det.scores)[mine], kind="stable")]:
                hit = False
                if len(gt):
                    overlaps = iou(np.asarray(det.boxes[k], dtype=np.float64), gt)
                    best = int(np.argmax(overlaps))
                    hit = bool(overlaps[best] >= iou_threshold and not taken[best])
                    taken[best] |= hit
                scores[c].append(float(det.scores[k]))
                hits[c].append(hit)
    per_class = [average_precision(scores[c], hits[c], n_truth[c]) for c in range(num_classes)]
    present = [ap for ap in per_class if not np.isnan(ap)]
    return (float(np.mean(present)) if present else float("nan")), per_class


def detect(model: nn.Module, images: Sequence[np.ndarray], batch_size: int = 16) -> list[Detections]:
    """Run an eval-mode detector on uint8 HxWx3 images."""
    out: list[Detections] = []
    with torch.inference_mode():
        for i in range(0, len(images), batch_size):
            batch = [torch.from_numpy(im).permute(2, 0, 1).float().div_(255.0) for im in images[i:i + batch_size]]
            for d in model(batch):
                out.append(Detections(d["boxes"].numpy(), d["scores"].numpy(), d["labels"].numpy()))
    return out


def heldout_scenes(n: int, start: int = HELDOUT_SEED) -> list[Scene]:
    """The held-out scenes with seeds ``start .. start + n - 1``."""
    return [make_scene(start + i) for i in range(n)]


def evaluate(model: nn.Module, scenes: Sequence[Scene]) -> tuple[float, list[float]]:
    """mAP@0.5 and per-class AP of an eval-mode detector on ``scenes``."""
    detections = detect(model, [s.image for s in scenes])
    return mean_average_precision(detections, [(s.boxes, s.labels) for s in scenes], len(LABELS))


def main(argv: Sequence[str] | None = None) -> int:
    """Print mAP@0.5 and per-class AP of the bundled (or given) weights on held-out scenes."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=500, help="number of held-out scenes")
    parser.add_argument("--seed", type=int, default=HELDOUT_SEED, help="first scene seed (not used in training)")
    parser.add_argument("--weights", default=None, help="weights file (default: bundled)")
    args = parser.parse_args(argv)

    torch.set_num_threads(2)
    detector = load_demo_detector(args.weights)
    scenes = heldout_scenes(args.n, args.seed)
    mean_ap, per_class = evaluate(detector.model, scenes)
    counts = np.bincount(np.concatenate([s.labels for s in scenes]), minlength=len(LABELS))
    print(f"held-out mAP@0.5 (n={args.n} scenes, seeds {args.seed}..): {mean_ap:.4f}")
    for name, ap, count in zip(detector.labels, per_class, counts, strict=True):
        print(f"  {name:<13} AP {ap:.4f}  ({count} objects)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
