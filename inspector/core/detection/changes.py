"""What an edit (or a second model) did to a detector's boxes: which stayed, moved, appeared or vanished.

The two lists of detections are matched one to one, greedily by IoU, best pair first, among detections of
the same class overlapping by at least SAME (the rule COCO's evaluation matches by), the pairs shown on both
sides before the rest. What counts is what the
viewer sees at `min_score`: a box whose match falls below it vanished (its new score is kept, to say so),
one whose match rose above it appeared. Torch-free: the window and `diff` both read it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..records.detections import Detection

SAME = 0.5  # IoU from which two boxes of one class are the same object
STILL = 0.9  # IoU from which a matched box has not moved
KINDS = ("kept", "moved", "appeared", "vanished")


@dataclass(frozen=True)
class BoxChange:
    """One object across the two runs: its rank among each run's detections (None: no match there),
    the IoU of the two boxes (0 without a match), and what the viewer sees happen to it."""

    kind: str
    before: int | None
    after: int | None
    iou: float

    def to_dict(self, before: Sequence[Detection], after: Sequence[Detection]) -> dict:
        """As `diff --json` prints it: the kind, and each side's detection (None where it has none)."""
        side = lambda found, k: found[k].to_dict() | {"rank": k} if k is not None else None  # noqa: E731
        return {"kind": self.kind, "iou": round(self.iou, 4), "before": side(before, self.before),
                "after": side(after, self.after)}


def box_changes(before: Sequence[Detection], after: Sequence[Detection], min_score: float,
                most: int | None = None) -> list[BoxChange]:
    """Every object shown (scoring at least `min_score`, among the best `most` of its run) in either run, in the
    order of the second run's ranks, the vanished after them in the first run's order."""
    cap = len(before) + len(after) if most is None else most
    seen = lambda found, k: k is not None and k < cap and found[k].score >= min_score  # noqa: E731
    match_of_before, match_of_after = {}, {}
    # pairs the viewer sees on both sides first: a shown box moved is never matched to a hidden one instead
    for overlap, i, j in sorted(_pairs(before, after), key=lambda p: not (seen(before, p[1]) and seen(after, p[2]))):
        if i not in match_of_before and j not in match_of_after:
            match_of_before[i], match_of_after[j] = (j, overlap), (i, overlap)
    changes = []
    for j in range(len(after)):
        i, overlap = match_of_after.get(j, (None, 0.0))
        if seen(after, j):
            kind = ("kept" if overlap >= STILL else "moved") if seen(before, i) else "appeared"
            changes.append(BoxChange(kind, i, j, overlap))
    for i in range(len(before)):
        j, overlap = match_of_before.get(i, (None, 0.0))
        if seen(before, i) and not seen(after, j):
            changes.append(BoxChange("vanished", i, j, overlap))
    return changes


def _pairs(before: Sequence[Detection], after: Sequence[Detection]) -> list[tuple[float, int, int]]:
    """(IoU, i, j) of every pair of one class overlapping by at least SAME, best first (ties: by i, then j);
    the IoU of each pair as `records.detections.iou` gives it, the matrix in numpy (100 x 100 boxes at once)."""
    if not before or not after:
        return []
    a = np.asarray([d.box for d in before], np.float64)[:, None, :]
    b = np.asarray([d.box for d in after], np.float64)[None, :, :]
    inter = (np.clip(np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]), 0, None)
             * np.clip(np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]), 0, None))
    union = (a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1]) + (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1]) - inter
    overlap = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
    same = np.asarray([d.label for d in before])[:, None] == np.asarray([d.label for d in after])[None, :]
    rows, cols = np.nonzero(same & (overlap >= SAME))
    return sorted(((float(overlap[i, j]), int(i), int(j)) for i, j in zip(rows, cols)),
                  key=lambda p: (-p[0], p[1], p[2]))


def summary(changes: Sequence[BoxChange]) -> str:
    """"2 kept, 1 moved, 1 appeared, 0 vanished"."""
    return ", ".join(f"{sum(c.kind == kind for c in changes)} {kind}" for kind in KINDS)
