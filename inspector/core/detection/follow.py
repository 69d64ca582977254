"""A box followed through perturbed copies of the image (integrated gradients' path, SmoothGrad's noise,
occlusion's windows, the faithfulness curves): each copy's score is that of its detection of the target's
class overlapping the target's box best (IoU at least MIN_IOU), 0 where the copy lost it.

The box and class are resolved once, on the image itself (`box:K` or `box:X0,Y0,X1,Y1[@CLASS]`), as every
perturbation method resolves a classifier's class once: every copy is asked about the same object.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..common.errors import SpecError
from ..target.objective import parse_target
from .outputs import detections_of
from .overlap import box_iou
from .targets import MIN_IOU, box_objective
from .thresholds import score_threshold


@dataclass(frozen=True)
class FollowedBox:
    """The object resolved on the image: its box (input pixels), class, the target as resolved, its rank
    among the image's detections and those detections (for the Attribution record), and its score there."""

    box: tuple[float, float, float, float]
    label: int | None
    resolved: str
    rank: int
    detections: tuple
    score: float

    def record(self) -> dict:
        """What an Attribution says of the box it explains."""
        return {"detections": self.detections, "target_detection": self.rank}

    def scores(self, outputs, lost: list | None = None) -> torch.Tensor:
        """(n,) the score of each copy's detection of this object, 0 where it has none (the graph kept
        from each matched score back to its copy); each copy that lost it appended to `lost` when given."""
        found = [self._score(one) for one in outputs]
        if lost is not None:
            lost.extend(i for i, (_score, matched) in enumerate(found) if not matched)
        return torch.stack([score for score, _matched in found])

    def _score(self, found: dict) -> tuple[torch.Tensor, bool]:
        scores = found["scores"]
        if scores.numel() == 0:
            return scores.sum(), False  # 0, on the scores' device and dtype
        overlap = box_iou(torch.tensor([self.box], dtype=torch.float64, device=scores.device),
                          found["boxes"].detach().double())[0]
        labels = found.get("labels")
        eligible = overlap >= MIN_IOU
        if labels is not None and self.label is not None:
            eligible &= labels == self.label
        if not bool(eligible.any()):
            return scores.sum() * 0, False  # lost: 0, with a gradient of 0
        return scores[torch.where(eligible, overlap, torch.full_like(overlap, -1.0)).argmax()], True


def follow(module, output, target, labels) -> FollowedBox:
    """The object `target` names among the detections `output` (the detector's answer to the image itself)."""
    score, label, resolved, k = box_objective(output, parse_target(target), labels, score_threshold(module))
    if k is None:
        raise SpecError("The model detected nothing above its score threshold on this input: there is no box "
                        "to explain.")
    found = tuple(detections_of(output, labels))
    return FollowedBox(found[k].box, label, str(resolved), k, found, float(score))


def followed(detections, rank: int) -> FollowedBox:
    """The object an explanation was made for (its detections and the rank of its box), followed again."""
    found = detections[rank]
    return FollowedBox(found.box, found.label, f"box:{rank}", rank, tuple(detections), float(found.score))
