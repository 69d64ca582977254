"""Faithfulness scores of a map: deletion and insertion (Petsiuk et al., RISE, 2018).

Pixels are ordered by the map (summed over channels for a (C, H, W) map), highest first, ties by pixel
index. After step i of K the first floor(i * H * W / K) pixels are replaced by the baseline in every
channel (deletion) or, starting from the baseline, put back from the input (insertion). The score is
the softmax probability of the target class for a classifier (the target's own objective otherwise);
the AUC is the trapezoid mean of the K + 1 points. A faithful map makes deletion fall fast (low AUC)
and insertion rise fast (high AUC). The K + 1 inputs run in batches, without gradients.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ...common.errors import SpecError
from ...target.objective import Target, objective, parse_target, primary_output
from ...records.labels import label_name
from ...records.methods import METRICS, class_agnostic
from ...records.signs import picture_of, ranked_by
from ...sources.loaded import LoadedModel, detects
from ..passes.batching import each_pass, fit_batch, pick_batch
from ..passes.layout import Layout
from ..passes.raised import model_errors
from ..record import _device, _unwrap


@dataclass(frozen=True)
class Curve:
    """One metric: the score after each step (K + 1 points, from step 0) and its AUC."""

    metric: str
    scores: np.ndarray
    auc: float
    score_of: str  # "probability of class 3" or "the objective (sum)"
    order: str = ""  # the order pixels go in, in words (records.signs.ranked_by)

    def as_json(self) -> dict:
        return {"auc": self.auc, "scores": [float(v) for v in self.scores], "score": self.score_of,
                "order": self.order}


def pixel_order(saliency: np.ndarray, size: tuple[int, int], sign: str = "signed") -> np.ndarray:
    """Flat pixel indices of an (H, W) image, hottest first in the map's picture under `sign`
    (records.signs: the picture the view draws), ties by index. A map of another size than the input is
    refused."""
    try:
        m = picture_of(saliency, sign)
    except ValueError as exc:
        raise SpecError(str(exc)) from None
    if m.shape != tuple(size):
        raise SpecError(f"The map's shape {tuple(np.shape(saliency))} does not cover the input's {tuple(size)} "
                        "pixels: deletion and insertion need one value per pixel.")
    return np.argsort(-m.reshape(-1), kind="stable")


def auc(scores: np.ndarray) -> float:
    """The trapezoid mean of K + 1 equally spaced points (the area under the curve over [0, 1])."""
    s = np.asarray(scores, dtype=np.float64)
    return float((s.sum() - (s[0] + s[-1]) / 2) / (len(s) - 1))


def faithfulness(model: LoadedModel | nn.Module, x: torch.Tensor, saliency: np.ndarray, target_index: int | None,
                 baseline: torch.Tensor | None = None, metrics=METRICS, steps: int = 50, batch: int | None = None,
                 cancel=None, progress=None, max_memory: int | None = None, box=None,
                 sign: str = "signed") -> dict[str, Curve]:
    """{metric: Curve} for `metrics` (deletion, insertion) of `saliency` explaining class `target_index`
    (None: the objective `sum` of the output) for input x (1, C, H, W), `baseline` x's shape (zeros); with
    `box` (a detector's FollowedBox, inspector.core.detection.follow) its score in each image, 0 where lost.
    Pixels go in the order of the map's picture under `sign` (records.signs), hottest first."""
    module, _labels = _unwrap(model)
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise SpecError(f"Unknown metric {unknown[0]!r}. Metrics: {', '.join(METRICS)}.")
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
        raise SpecError(f"The metric steps are a whole number, at least 1, not {steps!r}.")
    if x.ndim != 4 or x.shape[0] != 1:
        raise SpecError(f"Deletion and insertion score one image (1, C, H, W), not shape {tuple(x.shape)}.")
    if steps > x.shape[-2] * x.shape[-1]:
        raise SpecError(f"The metric steps ({steps}) are more than the input's {x.shape[-2] * x.shape[-1]} pixels: "
                        "at most one step a pixel.")
    device = _device(module)
    x = x.detach().to(device)
    b = torch.zeros_like(x) if baseline is None else baseline.detach().to(device=device, dtype=x.dtype)
    height, width = x.shape[-2:]
    order = torch.as_tensor(pixel_order(saliency, (height, width), sign), device=device)
    counts = [(i * height * width) // steps for i in range(steps + 1)]
    jobs = [(metric, i) for metric in metrics for i in range(steps + 1)]
    if batch is None:  # copies a pass from the free memory (core.batching)
        batch = pick_batch(module, x, len(jobs), grad=False, max_memory=max_memory, device=device)
    else:  # at most what one forward of the model takes
        batch = fit_batch(module, batch)
    out: dict[str, list[float]] = {metric: [] for metric in metrics}
    layout = Layout(module, grad=False)
    what = ""
    with torch.no_grad():
        for pass_ in each_pass(len(jobs), batch, "Deletion and insertion", cancel, progress):
            part = jobs[pass_]
            images = []
            for metric, i in part:
                mask = torch.zeros(height * width, dtype=torch.bool, device=device)
                mask[order[:counts[i]]] = True
                mask = mask.reshape(1, 1, height, width)
                first, second = (b, x) if metric == "deletion" else (x, b)  # the masked pixels come from `first`
                images.append(torch.where(mask, first, second))
            if box is not None:
                scores = box.scores(module(torch.cat(images))).double().tolist()
                what = f"the score of {box.resolved} (0 where the image lost it)"
            else:
                scores, what = _scores(primary_output(layout.run(module, torch.cat(images))), target_index, module)
            for (metric, _i), score in zip(part, scores):
                out[metric].append(score)
    words = _order_words(saliency, sign)
    return {metric: Curve(metric, np.array(values), auc(np.array(values)), what, words)
            for metric, values in out.items()}


def _order_words(saliency: np.ndarray, sign: str) -> str:
    """The order the pixels went in, in words: the sign's (`ranked_by`), or the raster order (ties by index) when
    the map's picture under `sign` is 0 everywhere (no negative value for negative, say)."""
    if picture_of(saliency, sign).any():
        return ranked_by(sign)
    lacks = {"positive": "has no positive value to rank them by", "negative": "has no negative value to rank them by"}
    return f"pixels in raster order (row by row): the map {lacks.get(sign, 'is 0 everywhere')}"


def _scores(output: torch.Tensor, index: int | Target | None, module: nn.Module) -> tuple[list[float], str]:
    """Each batch item's softmax probability of class `index` (a classifier), else its objective (of a `text:`
    target given as `index`, as the map explained it)."""
    if index is not None and not isinstance(index, Target) and output.ndim == 2 and output.shape[1] > 1:
        probabilities = torch.softmax(output.double(), dim=1)[:, index]
        return probabilities.tolist(), f"probability of class {index}"
    target = index if isinstance(index, Target) else Target("index", index) if index is not None else Target("sum")
    values = [float(objective(output[i:i + 1], target, None, module)[0]) for i in range(output.shape[0])]
    return values, f"the objective ({target})"


def predicted_class(model: LoadedModel | nn.Module, x: torch.Tensor, method: str) -> int:
    """The class the model predicts on x (the top logit), which a class-agnostic map is scored against; a
    SpecError when its output has no classes to pick from."""
    module, _labels = _unwrap(model)
    with torch.no_grad():
        output = primary_output(module(x.detach().to(_device(module))))
    if not isinstance(output, torch.Tensor) or output.ndim != 2 or output.shape[1] < 2:
        shape = f"shape {tuple(output.shape)}" if isinstance(output, torch.Tensor) else type(output).__name__
        raise SpecError(f"The {method} map explains no class and this model's output ({shape}) has no classes to "
                        "score it against: deletion and insertion cannot score it.")
    return int(output[0].argmax())


def scored(model: LoadedModel | nn.Module, x: torch.Tensor, found, metrics=METRICS, steps: int = 50,
           baseline: torch.Tensor | str | None = None, batch: int | None = None, cancel=None, progress=None,
           max_memory: int | None = None, blur_sigma: float | None = None, baseline_seed: int | None = None):
    """`found` (an Attribution) with its deletion and insertion curves: over its own baseline where it has
    one (ig, occlusion), else over `baseline`: a tensor, or a name (inspector.core.attribution.scores.baselines, with
    `blur_sigma` and `baseline_seed`), zeros when None."""
    import dataclasses

    from inspector.core.attribution.scores.baselines import make_baseline

    box = None
    if found.target_detection is not None and found.detections:  # a detector's box, followed through the images
        from inspector.core.detection.follow import followed

        box = followed(found.detections, found.target_detection)
    elif isinstance(model, LoadedModel) and detects(model):
        raise SpecError(f"The faithfulness metrics score a map of one box; this {found.method} map explains none.")
    made = None
    if found.baseline is not None:
        baseline = torch.as_tensor(found.baseline)[None]
    elif isinstance(baseline, str):
        loaded = model if isinstance(model, LoadedModel) else None
        made = make_baseline(baseline, x, loaded.preprocess if loaded else None, blur_sigma, baseline_seed,
                             loaded.input_shape if loaded else None)
        baseline = made.tensor
    index, notes = found.target_index, found.notes
    if found.target.startswith("text:"):  # an image-text model's prompts: their score, as the map explained it
        index = parse_target(found.target)
    if box is None and found.method in class_agnostic():  # explains no class: scored against the one predicted
        index = predicted_class(model, x, found.method)
        name = label_name(index, model.labels) if isinstance(model, LoadedModel) and model.labels else None
        notes += (f"scored against class {index}" + (f" ({name})" if name else "") +
                  f", the class the model predicts: {found.method} explains no class",)
    with model_errors("The faithfulness metrics"):  # a model that fails on the curves' images: one line
        curves = faithfulness(model, x, found.map, index, baseline, metrics, steps, batch, cancel, progress,
                              max_memory, box, found.shown_sign)
    found = dataclasses.replace(found, curves=tuple(curves.values()), notes=notes)
    if made is None:
        return found
    # a method with no baseline of its own (saliency, Grad-CAM, ...): the one the scores took, to show beside it
    return dataclasses.replace(found, baseline=made.tensor[0].detach().cpu().numpy(),
                               details=found.details + (("scores' baseline is", made.text),))
