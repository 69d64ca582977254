"""The objective of a detector: the score of one detection, so that gradients flow from that box alone.

`box:K` is the K-th detection by score after the model's own post-processing (its score threshold,
non-maximum suppression, its cap on detections); `box:X0,Y0,X1,Y1[@CLASS]` the detection of best IoU
(at least 0.5) with that box, among one class when given. torchvision's detectors keep the graph from
each kept score back to the input through their post-processing (a softmax or sigmoid, then indexing).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

import torch

from ..common.errors import SpecError
from ..target.objective import USAGE, Target
from ..records.detections import iou
from .outputs import order

MIN_IOU = 0.5
#: What a detector's load says about its input and targets.
NOTE = ("Detection: the image goes in at its own size in [0, 1] (the model resizes and normalises it); targets "
        "box:K (the K-th detection by score) or box:X0,Y0,X1,Y1[@CLASS] (input pixels).")


def _threshold_text(threshold: float | None) -> str:
    return f"the score threshold {threshold:g}" if threshold is not None else "the model's score threshold"


def _class_of(target: Target, labels: Sequence[str] | None) -> int | None:
    if target.label is None or isinstance(target.label, int):
        return target.label
    names = [str(n).lower() for n in labels or ()]
    if target.label.lower() in names:
        return names.index(target.label.lower())
    close = difflib.get_close_matches(target.label.lower(), names, n=3)
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    raise SpecError(f"Target {target}: this model has no class named {target.label!r}.{hint}")


def box_objective(output, target: Target, labels: Sequence[str] | None,
                  threshold: float | None) -> tuple[torch.Tensor, int | None, Target, int | None]:
    """(the objective, the class of its detection, the target resolved, the detection's rank by score).
    `auto` is box:0, or the sum of no scores (0, every gradient 0) when nothing was detected."""
    first = output[0]
    scores = first["scores"]
    rank = order(first).tolist()
    if target.kind == "auto":
        if not rank:
            return scores.sum(), None, Target("auto"), None
        target = Target("box", 0)
    if target.kind != "box":
        whose = "segmentations" if target.kind == "seg" else "classifiers"
        raise SpecError(f"Target {target} is for {whose}; this model detects objects. Use box:K (box:0 is "
                        f"the best detection) or box:X0,Y0,X1,Y1[@CLASS]. (Targets: {USAGE}.)")
    if not rank:
        raise SpecError(f"Target {target}: the model detected nothing above {_threshold_text(threshold)}; "
                        f"lower it (--score-threshold) or pick another input.")
    if target.box is None:
        if target.index >= len(rank):
            raise SpecError(f"Target {target}: the model made {len(rank)} detection(s) above "
                            f"{_threshold_text(threshold)}, box:0 to box:{len(rank) - 1}.")
        k = target.index
    else:
        k = _best_match(first, rank, target, labels)
    i = rank[k]
    classes = first.get("labels")
    return scores[i], (int(classes[i]) if classes is not None else None), target, k


def check_box_rank(module, target: Target) -> None:
    """`box:K` past the most detections the model can ever keep (`most_detections`, where its loader sets it: a
    query-based detector's queries, or its best query x class pairs): a SpecError before the model runs."""
    most = getattr(module, "most_detections", None)
    if target.kind == "box" and target.box is None and isinstance(most, int) and target.index >= most:
        raise SpecError(f"Target {target}: this model keeps at most {most} detection(s) (its queries' answers), "
                        f"box:0 to box:{most - 1}.")


def _best_match(first: dict, rank: list[int], target: Target, labels: Sequence[str] | None) -> int:
    """The rank of the detection that best overlaps the target's box (IoU >= MIN_IOU)."""
    wanted = _class_of(target, labels)
    boxes = first["boxes"].detach().float().cpu().tolist()
    classes = first.get("labels")
    classes = classes.detach().cpu().tolist() if classes is not None else [0] * len(boxes)
    if wanted is not None and wanted not in {classes[i] for i in rank}:
        raise SpecError(f"Target {target}: the model detected nothing of class {target.label} "
                        f"({len(rank)} detection(s) of other classes).")
    best, best_iou = None, 0.0
    for k, i in enumerate(rank):
        if wanted is not None and classes[i] != wanted:
            continue
        overlap = iou(tuple(target.box), tuple(boxes[i]))
        if overlap > best_iou:
            best, best_iou = k, overlap
    if best is None or best_iou < MIN_IOU:
        among = f" of class {target.label}" if wanted is not None else ""
        raise SpecError(f"Target {target}: no detection{among} matches the box (best IoU {best_iou:.2f}, at least "
                        f"{MIN_IOU} needed; {len(rank)} detection(s) in all).")
    return best
