"""A torchvision detector's own score threshold: the detections its post-processing keeps.

Faster, Mask and Keypoint R-CNN keep it on `roi_heads.score_thresh`; RetinaNet, FCOS and SSD on
`score_thresh`. Random weights score every class near chance (1/91 for COCO's), under the default
threshold of 0.05 or 0.2: such a model is given 0 so that its top boxes can be looked at.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..common.errors import SpecError

if TYPE_CHECKING:  # torch-free at run time: the CLI checks a threshold before torch is imported
    from torch import nn


def _owner(module: nn.Module):
    heads = getattr(module, "roi_heads", None)
    if heads is not None and hasattr(heads, "score_thresh"):
        return heads
    return module if hasattr(module, "score_thresh") else None


def score_threshold(module: nn.Module) -> float | None:
    """The detector's score threshold, None for a model that keeps none."""
    owner = _owner(module)
    return float(owner.score_thresh) if owner is not None else None


def set_score_threshold(module: nn.Module, value: float) -> None:
    """Keep detections scoring at least `value` (0 to 1) from now on."""
    owner = _owner(module)
    if owner is None:
        raise SpecError("A score threshold is for detection models; this model keeps none.")
    owner.score_thresh = check_score_threshold(value)


def check_score_threshold(value: float) -> float:
    """`value` as a float when it is a score threshold (0 to 1), else a SpecError; needs no model."""
    if not 0.0 <= float(value) <= 1.0:
        raise SpecError(f"The score threshold is between 0 and 1, got {value}.")
    return float(value)
