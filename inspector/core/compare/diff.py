"""Two models side by side: the same capture on both, compared key by key in forward order.

Both models see the same input and the same objective: the target is resolved on the first
model (top-1 becomes that class index) and the second model backpropagates from the very same
class. Every capture key both runs have gets its relative L2 difference `||a - b|| / max(||a||,
tiny)`, cosine similarity and largest absolute difference; `first_divergent` is the first
forward capture (`input`/`output` sites, then the model's output) whose relative difference
exceeds the threshold. Gradients are reported but never decide it: a change anywhere moves
every gradient below it. Running the two models is `inspector.core.compare.pair`'s.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from ..detection.changes import BoxChange, box_changes
from ..detection.picture import MOST, default_min_score
from ..common.errors import MismatchError
from ..engine.diagnostics import forward_rank
from ..engine.result import RunResult
from .arguments import check_threshold

TINY = 1e-12
DEFAULT_THRESHOLD = 1e-3
FORWARD_SITES = frozenset({"input", "output"})


@dataclass(frozen=True)
class DiffRow:
    """One key compared. `forward`: an activation (input/output site or the model's output),
    the kind that decides the first divergent key."""

    key: str
    rel_l2: float
    cosine: float
    max_abs: float
    forward: bool = True

    def to_dict(self) -> dict:
        return {"key": self.key, "rel_l2": self.rel_l2, "cosine": self.cosine, "max_abs": self.max_abs}


@dataclass(frozen=True)
class PredictionDelta:
    index: int
    label: str
    first: float
    second: float

    @property
    def delta(self) -> float:
        return self.second - self.first


@dataclass
class ModelDiff:
    """What `compare_results` finds. Plain data (numpy arrays inside the two results)."""

    first_divergent: str | None
    threshold: float
    rows: list[DiffRow]
    only_in_first: list[str]
    only_in_second: list[str]
    deltas: list[PredictionDelta]
    first: RunResult | None = None
    second: RunResult | None = None
    names: tuple[str, str] = ("first", "second")
    timings: dict[str, float] = field(default_factory=dict)
    boxes: list[BoxChange] | None = None  # two detectors: what became of each object shown
    min_score: float | None = None  # the score from which boxes are shown (and `boxes` counts them)

    def row(self, key: str) -> DiffRow | None:
        return next((r for r in self.rows if r.key == key), None)

    def by_layer(self) -> dict[str, float]:
        """Module path -> the largest relative difference of its activations (any call; NaN wins)."""
        out: dict[str, float] = {}
        for r in self.rows:
            layer = r.key.partition(":")[0]
            if r.forward and r.key != "output":
                old = out.get(layer, 0.0)
                out[layer] = r.rel_l2 if (r.rel_l2 != r.rel_l2 or r.rel_l2 > old) else old
        return out

    def first_layer(self) -> str | None:
        """The module path of the first divergent capture (None: nothing diverged, or the model's output)."""
        if self.first_divergent is None or self.first_divergent == "output":
            return None
        return self.first_divergent.partition(":")[0]

    def to_dict(self) -> dict:
        """The JSON shape `network-inspector diff --json` prints."""
        preds = {"first": [asdict(p) for p in (self.first.predictions if self.first else [])],
                 "second": [asdict(p) for p in (self.second.predictions if self.second else [])],
                 "deltas": [{**asdict(d), "delta": d.delta} for d in self.deltas]}
        if self.first is not None:
            preds["target"] = self.first.target
            preds["target_index"] = self.first.target_index
        out = {"first_divergent": self.first_divergent, "threshold": self.threshold,
               "rows": [r.to_dict() for r in self.rows], "only_in_first": list(self.only_in_first),
               "only_in_second": list(self.only_in_second), "predictions": preds}
        if self.boxes is not None:
            out["boxes"] = {"min_score": self.min_score,
                            "changes": [c.to_dict(self.first.detections, self.second.detections) for c in self.boxes]}
        return out

    def arrays(self) -> dict[str, np.ndarray]:
        """Both models' arrays and their differences (second - first), as `--out` writes them:
        `first/KEY`, `second/KEY`, `diff/KEY`."""
        a = self.first.arrays() if self.first else {}
        b = self.second.arrays() if self.second else {}
        out = {f"first/{k}": v for k, v in a.items()}
        out.update({f"second/{k}": v for k, v in b.items()})
        for k in a.keys() & b.keys():
            if np.shape(a[k]) == np.shape(b[k]):
                out[f"diff/{k}"] = np.asarray(b[k], dtype=np.result_type(a[k], b[k])) - a[k]
        return out


def divergence(a, b) -> tuple[float, float, float]:
    """(relative L2 difference, cosine similarity, max |a - b|) of two arrays of one shape.
    Relative to ||a|| (the first model's), floored at TINY; the cosine of two zero arrays is 1,
    of a zero and a non-zero one 0."""
    import torch

    # as they are (no reshape: a permuted capture, ConvNeXt's channels-last, would be copied)
    ta, tb = torch.as_tensor(np.asarray(a)), torch.as_tensor(np.asarray(b))
    if not ta.is_floating_point():
        ta, tb = ta.double(), tb.double()
    if ta.numel() == 0:
        return 0.0, 1.0, 0.0
    d = ta - tb
    # the largest |a - b| as the infinity norm: aminmax is several times slower, on permuted tensors most
    max_abs = float(torch.linalg.vector_norm(d, math.inf))
    nd = float(torch.linalg.vector_norm(d))
    na, nb = float(torch.linalg.vector_norm(ta)), float(torch.linalg.vector_norm(tb))
    if not (math.isfinite(nd) and math.isfinite(na) and math.isfinite(nb)):
        return float("nan"), float("nan"), max_abs
    if na == 0 or nb == 0:
        cosine = 1.0 if na == nb else 0.0
    else:
        # a.b from the three norms (||a-b||^2 = ||a||^2 + ||b||^2 - 2 a.b): one pass fewer than a dot
        cosine = (na * na + nb * nb - nd * nd) / (2 * na * nb)
        cosine = min(1.0, max(-1.0, cosine))
    return nd / max(na, TINY), cosine, max_abs


def prediction_deltas(first: RunResult, second: RunResult) -> list[PredictionDelta]:
    """The union of both top-k lists (the second's order first) with each model's probability.
    For (batch, classes) logits the probabilities are the softmax of each output; otherwise (a
    segmentation's pixel shares) the values the predictions carry, 0 where a list lacks a class."""
    labels = {p.index: p.label for p in first.predictions + second.predictions}
    order = list(dict.fromkeys([p.index for p in second.predictions] + [p.index for p in first.predictions]))
    if first.output is not None and second.output is not None and first.output.ndim == 2 \
            and np.shape(first.output) == np.shape(second.output):
        p0, p1 = _softmax(first.output), _softmax(second.output)
        return [PredictionDelta(i, labels[i], float(p0[i]), float(p1[i])) for i in order]
    share0 = {p.index: p.probability for p in first.predictions}
    share1 = {p.index: p.probability for p in second.predictions}
    return [PredictionDelta(i, labels[i], share0.get(i, 0.0), share1.get(i, 0.0)) for i in order]


def _softmax(logits: np.ndarray) -> np.ndarray:
    z = logits[0].astype(np.float64)
    e = np.exp(z - z.max())
    return e / e.sum()


def compare_results(first: RunResult, second: RunResult, threshold: float = DEFAULT_THRESHOLD,
                    names: tuple[str, str] = ("first", "second")) -> ModelDiff:
    """Compare two results of the same capture key by key, in the first result's forward order."""
    check_threshold(threshold)
    detecting = first.detections is not None or second.detections is not None  # outputs: one row per box found
    if not detecting and first.output is not None and second.output is not None \
            and np.shape(first.output) != np.shape(second.output):
        raise MismatchError(f"The two models' outputs have different shapes: {names[0]} gives "
                            f"{tuple(np.shape(first.output))}, {names[1]} gives {tuple(np.shape(second.output))}. "
                            f"Compare models with the same output.")
    a, b = first.captures, second.captures
    rank = forward_rank(first)
    shared = sorted((c.key for name, c in a.items() if name in b), key=lambda k: (rank(k), k.is_grad))
    rows, first_divergent = [], None
    for key in shared:
        name = str(key)
        x, y = a[name].array, b[name].array
        if x is None or y is None:
            continue
        if np.shape(x) != np.shape(y):
            raise MismatchError(f"{name} has shape {tuple(np.shape(x))} in {names[0]} and {tuple(np.shape(y))} in "
                                f"{names[1]}: the two models differ there, not only in their weights.")
        forward = key.site in FORWARD_SITES
        rows.append(DiffRow(name, *divergence(x, y), forward=forward))
    if first.output is not None and second.output is not None and not detecting:
        rows.append(DiffRow("output", *divergence(first.output, second.output), forward=True))
    if first.input_grad is not None and second.input_grad is not None:
        rows.append(DiffRow("input:grad", *divergence(first.input_grad, second.input_grad), forward=False))
    for row in rows:
        if row.forward and not (row.rel_l2 <= threshold):  # NaN counts as diverged
            first_divergent = row.key
            break
    only_first = [k for k in a if k not in b]
    only_second = [k for k in b if k not in a]
    boxes = min_score = None
    if first.detections is not None and second.detections is not None:
        min_score = default_min_score(first.detections)
        boxes = box_changes(first.detections, second.detections, min_score, MOST)
    return ModelDiff(first_divergent, threshold, rows, only_first, only_second,
                     prediction_deltas(first, second), first, second, names, boxes=boxes, min_score=min_score)


def same_objective(result: RunResult):
    """The target the second model must use: the one resolved on the first model, with top-1 (or
    auto) fixed to the class it picked there, and a detector's box fixed to where it was (the second model's
    detection of best IoU with it, of its class)."""
    from ..target.objective import (  # torch: the window reads this module before the engine loads
        Target,
        parse_target,
    )

    if result.detections is not None and result.target_detection is not None:
        from ..records.detections import box_target

        return parse_target(box_target(result.detections[result.target_detection]))  # that object, by IoU
    resolved = parse_target(result.target)
    if result.target_index is not None and resolved.kind in ("auto", "top1", "index"):
        return Target("index", result.target_index)
    return resolved
