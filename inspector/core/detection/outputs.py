"""A detector's answer, `[{"boxes": (D, 4), "labels": (D,), "scores": (D,), ...}]` per image, as detections
of the first image, best first, and as the arrays a capture file keeps."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ..records.detections import Detection
from ..records.labels import label_name

#: What a capture file holds per detection, in this order, under the key `output`.
COLUMNS = ("x0", "y0", "x1", "y1", "score", "label")


def is_detection_output(output) -> bool:
    """`output` is a list of per-image dicts with boxes and scores (torchvision's detectors in eval mode)."""
    return (isinstance(output, (list, tuple)) and len(output) > 0
            and all(isinstance(d, dict) and "boxes" in d and "scores" in d for d in output))


def order(first: dict) -> torch.Tensor:
    """The detections' indices by score, best first (torchvision's are already so; kept stable)."""
    return torch.sort(first["scores"].detach(), descending=True, stable=True).indices


def detections_of(output, labels: Sequence[str] | None) -> list[Detection]:
    """The first image's detections, best first, boxes in input pixels."""
    first = output[0]
    boxes = first["boxes"].detach().float().cpu()
    scores = first["scores"].detach().float().cpu()
    classes = first.get("labels")
    classes = classes.detach().cpu() if classes is not None else torch.zeros(len(scores), dtype=torch.long)
    found = []
    for i in order(first).tolist():
        label = int(classes[i])
        found.append(Detection(tuple(float(v) for v in boxes[i].tolist()), label, label_name(label, labels),
                               float(scores[i])))
    return found


def detection_arrays(output) -> dict[str, np.ndarray]:
    """`output`: one row per detection of the first image (COLUMNS), best first; `detections:masks`
    (D, H, W) and `detections:keypoints` (D, K, 3) where the model gives them (Mask, Keypoint R-CNN)."""
    first = output[0]
    rank = order(first)
    classes = first.get("labels", torch.zeros_like(first["scores"]))
    table = torch.cat([first["boxes"].detach().float(), first["scores"].detach().float()[:, None],
                       classes.detach().float()[:, None]], dim=1)[rank]
    arrays = {"output": table.cpu().numpy()}
    if "masks" in first:
        masks = first["masks"].detach().float()[rank]
        arrays["detections:masks"] = masks.reshape(masks.shape[0], *masks.shape[-2:]).cpu().numpy()
    if "keypoints" in first:
        arrays["detections:keypoints"] = first["keypoints"].detach().float()[rank].cpu().numpy()
    return arrays
