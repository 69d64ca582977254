"""Faithfulness scores of a map: deletion and insertion (Petsiuk et al., RISE, 2018) under a named protocol
(records.protocols), and ROAD (Rong et al., 2022; the images: scores.road).

Pixels are ordered by the map's picture under its sign (records.signs: summed over channels for a (C, H, W)
map), highest first, ties by pixel index. After each step the first pixels of that order are replaced in every
channel: by what deletion puts in place of the input, or, starting from what insertion starts from, put back
from the input. How many pixels a step and those two ends are the protocol's: `inspector` (the default) takes K
equal steps, floor(i * H * W / K) pixels after step i, both games over the map's baseline; `rise2018` takes 224
pixels a step, deletion to zeros and insertion from the input blurred, as the RISE reference code does. The
score is the softmax probability of the target class for a classifier (the target's own objective otherwise, a
box's score for a detector); the AUC is the trapezoid mean of the points, (sum - first/2 - last/2) / (points - 1).
A faithful map makes deletion fall fast (low AUC) and insertion rise fast (high AUC). The images run in batches,
without gradients.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ...common.errors import SpecError
from ...target.objective import Target, objective, parse_target, primary_output
from ...records.labels import label_name
from ...records.methods import METRIC_CURVES, METRICS, class_agnostic
from ...records.protocols import (
    DEFAULT_PROTOCOL,
    GAMES,
    ROAD_NOISE,
    ROAD_PERCENTAGES,
    check_protocol,
    check_road,
    road_removed,
)
from ...records.signs import picture_of, ranked_by
from ...sources.loaded import LoadedModel, detects
from ..passes.batching import each_pass, fit_batch, pick_batch
from ..passes.layout import Layout
from ..passes.raised import model_errors
from ..record import _device, _unwrap
from .protocols import game_ends


@dataclass(frozen=True)
class Curve:
    """One curve: the score at each point and its AUC, with how it was made: the protocol and every setting
    (`settings`, (name, value) in the order said) and the share of the pixels changed at each point (`at`)."""

    metric: str  # deletion, insertion, road-morf, road-lerf
    scores: np.ndarray
    auc: float
    score_of: str  # "probability of class 3" or "the objective (sum)"
    order: str = ""  # the order pixels go in, in words (records.signs.ranked_by)
    protocol: str = ""  # the preset of its settings: a protocol's name (records.protocols), or "road"
    settings: tuple[tuple[str, object], ...] = ()
    at: tuple[float, ...] = ()

    def said(self) -> str:
        """The protocol and its settings in words, said with every AUC."""
        settings = "; ".join(f"{name} {value}" for name, value in self.settings)
        return f"protocol {self.protocol}" + (f": {settings}" if settings else "") if self.protocol else settings

    def as_json(self) -> dict:
        return {"auc": self.auc, "scores": [float(v) for v in self.scores], "score": self.score_of,
                "order": self.order, "protocol": self.protocol, "settings": dict(self.settings),
                "at": [float(v) for v in self.at]}


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


def auc(scores: np.ndarray, at=None) -> float:
    """The area under the curve divided by the span it covers (the trapezoid mean of the points): for K + 1
    equally spaced points (`at` None) (sum - first/2 - last/2) / K; else over the positions `at`. One point: its
    score."""
    s = np.asarray(scores, dtype=np.float64)
    if len(s) == 1:
        return float(s[0])
    if at is None:
        return float((s.sum() - (s[0] + s[-1]) / 2) / (len(s) - 1))
    x = np.asarray(at, dtype=np.float64)
    return float(((s[1:] + s[:-1]) / 2 * np.diff(x)).sum() / (x[-1] - x[0]))


def faithfulness(model: LoadedModel | nn.Module, x: torch.Tensor, saliency: np.ndarray, target_index: int | None,
                 baseline: torch.Tensor | None = None, metrics=GAMES, steps: int | None = None,
                 batch: int | None = None, cancel=None, progress=None, max_memory: int | None = None, box=None,
                 sign: str = "signed", protocol: str = DEFAULT_PROTOCOL) -> dict[str, Curve]:
    """{metric: Curve} for `metrics` (deletion, insertion) of `saliency` explaining class `target_index`
    (None: the objective `sum` of the output) for input x (1, C, H, W) under `protocol` (records.protocols:
    `steps` its K where it takes one, None for its own), `baseline` x's shape (zeros) where the protocol reads one;
    with `box` (a detector's FollowedBox, inspector.core.detection.follow) its score in each image, 0 where lost.
    Pixels go in the order of the map's picture under `sign` (records.signs), hottest first."""
    module, _labels = _unwrap(model)
    rule = check_protocol(protocol)
    unknown = [m for m in metrics if m not in GAMES]
    if unknown:
        raise SpecError(f"Unknown metric {unknown[0]!r} for the deletion and insertion games: they are "
                        f"{', '.join(GAMES)} (scored() draws the others).")
    counts = _step_counts(rule, x, steps)
    height, width = x.shape[-2:]
    device = _device(module)
    x = x.detach().to(device)
    b = torch.zeros_like(x) if baseline is None else baseline.detach().to(device=device, dtype=x.dtype)
    deleted_to, inserted_from = game_ends(rule, x, b)
    order = torch.as_tensor(pixel_order(saliency, (height, width), sign), device=device)

    def image_of(job: tuple[str, int]) -> torch.Tensor:
        metric, i = job
        mask = torch.zeros(height * width, dtype=torch.bool, device=device)
        mask[order[:counts[i]]] = True
        mask = mask.reshape(1, 1, height, width)
        return torch.where(mask, deleted_to, x) if metric == "deletion" else torch.where(mask, x, inserted_from)

    jobs = [(metric, i) for metric in metrics for i in range(len(counts))]
    values, what = _score_images(module, x, jobs, image_of, target_index, box, batch, max_memory, cancel, progress,
                                 "Deletion and insertion")
    words, settings = _order_words(saliency, sign), rule.settings(height * width, steps)
    at = tuple(c / (height * width) for c in counts)
    curves = {}
    for k, metric in enumerate(metrics):
        scores = np.array(values[k * len(counts):(k + 1) * len(counts)])
        curves[metric] = Curve(metric, scores, auc(scores), what, words, rule.name, settings, at)
    return curves


def road(model: LoadedModel | nn.Module, x: torch.Tensor, saliency: np.ndarray, target_index: int | None,
         percentages=ROAD_PERCENTAGES, noise: float = ROAD_NOISE, seed: int | None = None, sign: str = "signed",
         box=None, batch: int | None = None, cancel=None, progress=None,
         max_memory: int | None = None) -> dict[str, Curve]:
    """{"road-morf": Curve, "road-lerf": Curve}: ROAD (scores.road) at each of `percentages` % removed, the most
    relevant pixels first and the least relevant first, each image's score as deletion's (the softmax probability
    of the class, not its change), the AUC the trapezoid mean over the percentages. The noise (sigma `noise` in the
    input's units) is drawn from one generator seeded by `seed` (a new seed when None; the curve says it), MoRF's
    images first, in the order of the percentages. With noise 0 each point is pytorch-grad-cam's
    ROADMostRelevantFirst(100 - p) / ROADLeastRelevantFirst(100 - p) with return_diff=False."""
    from ...sources.seeds import check_seed, new_seed
    from .road import impute, removed_pixels

    module, _labels = _unwrap(model)
    percentages = check_road(noise, percentages)
    used = (new_seed() if seed is None else check_seed(seed, "ROAD's seed")) if noise > 0 else None
    if x.ndim != 4 or x.shape[0] != 1:
        raise SpecError(f"ROAD scores one image (1, C, H, W), not shape {tuple(x.shape)}.")
    height, width = x.shape[-2:]
    order = pixel_order(saliency, (height, width), sign)
    device = _device(module)
    x = x.detach().to(device)
    generator = torch.Generator(device="cpu").manual_seed(used) if used is not None else None
    image = x[0].cpu()

    def image_of(job: tuple[str, float]) -> torch.Tensor:
        metric, p = job
        mask = removed_pixels(order, road_removed(height * width, p), metric == "road-morf", (height, width))
        return impute(image, mask, noise, generator).to(device=device, dtype=x.dtype)[None]

    jobs = [(metric, p) for metric in ("road-morf", "road-lerf") for p in percentages]
    values, what = _score_images(module, x, jobs, image_of, target_index, box, batch, max_memory, cancel, progress,
                                 "ROAD")
    at = tuple(p / 100 for p in percentages)
    common = (("removed %", ", ".join(f"{p:g}" for p in percentages)),
              ("imputation", "noisy linear (8 neighbours, direct 1/6, diagonal 1/12, one sparse system)"),
              ("noise sigma", noise), ("seed", used if used is not None else "none (no noise)"))
    words = _order_words(saliency, sign)
    curves = {}
    for k, metric in enumerate(("road-morf", "road-lerf")):
        scores = np.array(values[k * len(percentages):(k + 1) * len(percentages)])
        first = "the most relevant first" if metric == "road-morf" else "the least relevant first"
        curves[metric] = Curve(metric, scores, auc(scores, at), what, words, "road", (("removes", first), *common),
                               at)
    return curves


def _step_counts(rule, x: torch.Tensor, steps) -> list[int]:
    """The pixels changed at each point of the games under `rule` for input x, the steps checked first."""
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1):
        raise SpecError(f"The metric steps are a whole number, at least 1, not {steps!r}.")
    if x.ndim != 4 or x.shape[0] != 1:
        raise SpecError(f"Deletion and insertion score one image (1, C, H, W), not shape {tuple(x.shape)}.")
    pixels = x.shape[-2] * x.shape[-1]
    if steps is not None and steps > pixels:
        raise SpecError(f"The metric steps ({steps}) are more than the input's {pixels} pixels: "
                        "at most one step a pixel.")
    return rule.step_counts(pixels, steps)


def _score_images(module: nn.Module, x: torch.Tensor, jobs: list, image_of, index: int | None, box, batch, max_memory,
                  cancel, progress, title: str) -> tuple[list[float], str]:
    """The score of each job's image (`image_of(job)`, (1, C, H, W)) in batches without gradients, and what the
    score is in words."""
    if batch is None:  # copies a pass from the free memory (core.batching)
        batch = pick_batch(module, x, len(jobs), grad=False, max_memory=max_memory, device=x.device)
    else:  # at most what one forward of the model takes
        batch = fit_batch(module, batch)
    values: list[float] = []
    layout = Layout(module, grad=False)
    what = ""
    with torch.no_grad():
        for pass_ in each_pass(len(jobs), batch, title, cancel, progress):
            images = torch.cat([image_of(job) for job in jobs[pass_]])
            if box is not None:
                scores = box.scores(module(images)).double().tolist()
                what = f"the score of {box.resolved} (0 where the image lost it)"
            else:
                scores, what = _scores(primary_output(layout.run(module, images)), index, module)
            values.extend(scores)
    return values, what


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


def scored(model: LoadedModel | nn.Module, x: torch.Tensor, found, metrics=GAMES, steps: int | None = None,
           baseline: torch.Tensor | str | None = None, batch: int | None = None, cancel=None, progress=None,
           max_memory: int | None = None, blur_sigma: float | None = None, baseline_seed: int | None = None,
           protocol: str = DEFAULT_PROTOCOL, road_noise: float = ROAD_NOISE, road_seed: int | None = None,
           road_percentages=ROAD_PERCENTAGES):
    """`found` (an Attribution) with the curves of `metrics` (records.methods.METRICS), in that order: deletion
    and insertion under `protocol` (records.protocols; `steps` its K where it takes one, None for its own), over
    the map's own baseline where it has one (ig, occlusion) and the protocol reads one, else over `baseline`: a
    tensor, or a name (inspector.core.attribution.scores.baselines, with `blur_sigma` and `baseline_seed`), zeros
    when None; road: ROAD's two curves (`road`, with `road_noise`, `road_seed`, `road_percentages`)."""
    import dataclasses

    from inspector.core.attribution.scores.baselines import make_baseline

    rule = check_protocol(protocol)
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise SpecError(f"Unknown metric {unknown[0]!r}. Metrics: {', '.join(METRICS)}.")
    games = tuple(m for m in metrics if m in GAMES)
    if games:
        _step_counts(rule, x, steps)  # bad steps, and steps a protocol fixes: refused before any pass
    if "road" in metrics:
        check_road(road_noise, road_percentages)
    box = None
    if found.target_detection is not None and found.detections:  # a detector's box, followed through the images
        from inspector.core.detection.follow import followed

        box = followed(found.detections, found.target_detection)
    elif isinstance(model, LoadedModel) and detects(model):
        raise SpecError(f"The faithfulness metrics score a map of one box; this {found.method} map explains none.")
    if games and box is not None and rule.classes_only:
        raise SpecError(f"The protocol {rule.name} scores a class's probability; a detector's box is scored under "
                        f"the protocol {DEFAULT_PROTOCOL}.")
    made = None
    if not (games and rule.takes_baseline):
        baseline = None  # no game reads one
    elif found.baseline is not None:
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
    if rule.classes_only and games and index is None:
        raise SpecError(f"The protocol {rule.name} scores a class's probability; this {found.method} map has no "
                        "class to score.")
    drawn = {}
    with model_errors("The faithfulness metrics"):  # a model that fails on the curves' images: one line
        if games:
            drawn.update(faithfulness(model, x, found.map, index, baseline, games, steps, batch, cancel, progress,
                                      max_memory, box, found.shown_sign, protocol))
        if "road" in metrics:
            drawn.update(road(model, x, found.map, index, road_percentages, road_noise, road_seed, found.shown_sign,
                              box, batch, cancel, progress, max_memory))
    curves = tuple(drawn[name] for metric in metrics for name in METRIC_CURVES[metric])
    found = dataclasses.replace(found, curves=curves, notes=notes)
    if made is None:
        return found
    # a method with no baseline of its own (saliency, Grad-CAM, ...): the one the scores took, to show beside it
    return dataclasses.replace(found, baseline=made.tensor[0].detach().cpu().numpy(),
                               details=found.details + (("scores' baseline is", made.text),))
