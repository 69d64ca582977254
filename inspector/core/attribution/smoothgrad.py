"""SmoothGrad (Smilkov et al. 2017): saliency, guided backprop or integrated gradients averaged (or their
squares, or their variance) over noisy copies of the input (`smooth` draws the noise and sums the maps), every
copy explaining the class resolved on the input itself.
"""

from __future__ import annotations

import contextlib

import numpy as np
import torch
from torch import nn

from ..detection.follow import follow
from ..common.errors import SpecError
from ..target.objective import Target, objective, parse_target, primary_output
from ..records.detections import box_target
from ..records.methods import SCORES_BASELINE, SMOOTHED
from ..engine.runner import RunSpec, run, zero_head_warning
from ..sources.loaded import LoadedModel
from .entry import attribute, method_row
from .passes.batching import LeafBytes, parse_memory, pick_batch
from .passes.layout import Layout, eval_norms
from .record import Attribution, _device, _unwrap, box_found, boxes_of
from .smooth import AHEAD_BYTES, NoiseCopies, check_smoothing, fresh_seed, smooth


def _saliency_many(module: nn.Module, xs: torch.Tensor, target: Target) -> np.ndarray:
    """Saliency maps of a batch of inputs (eval mode: every item is on its own): max over channels of
    |d objective_i / d input_i|, the objective `target` resolved on the input (a class, `sum`, or a
    segmentation's class map, in its box), summed over the items."""
    xs = xs.detach().requires_grad_(True)
    with torch.enable_grad():
        score = objective(primary_output(module(xs)), target, tuple(xs.shape[-2:]), module)[0]
        (grad,) = torch.autograd.grad(score, xs)
    found = grad.abs()
    return (found.amax(dim=1) if found.ndim >= 3 else found).detach().cpu().numpy()


def smoothgrad(model: LoadedModel | nn.Module, x: torch.Tensor, target=None, of: str = "saliency",
               kind: str = "smoothgrad", samples: int = 25, noise: float = 0.15, seed: int | None = None,
               cancel=None, progress=None, **ig) -> Attribution:
    """SmoothGrad (`core.smooth`) of `of`'s map (saliency, guided or ig, with `ig`'s options), every noisy
    sample explaining the class resolved on x itself."""
    if of not in SMOOTHED:
        raise SpecError(f"SmoothGrad smooths {', '.join(SMOOTHED)}, not {of!r}.")
    # the smoothed method gets the options it takes (ig's path; batch and max_memory: SmoothGrad's own passes)
    taken = {*method_row(of).option_names, *(o.name for o in SCORES_BASELINE)}
    own = {k: v for k, v in ig.items() if k in taken} or None
    check_smoothing(kind, samples, noise)
    seed = fresh_seed(seed)
    # the noise is drawn on the CPU while the model works on x
    most = parse_memory(ig.get("max_memory"))
    ahead = AHEAD_BYTES if most is None else min(AHEAD_BYTES, most // 4)
    draws = NoiseCopies(tuple(x.shape), seed, samples, ahead) if noise > 0 else None  # a quarter of --max-memory
    try:
        return _smoothgrad(model, x, target, of, kind, samples, noise, seed, cancel, progress, own, draws, ig)
    finally:
        if draws is not None:
            draws.close()


def _smoothgrad(model, x, target, of, kind, samples, noise, seed, cancel, progress, own, draws, ig) -> Attribution:
    module, labels = _unwrap(model)
    x = x.detach().to(_device(module))  # the noisy copies are made where the model is (the noise on the CPU)
    counted = LeafBytes(module) if of == "saliency" else contextlib.nullcontext()
    with counted:  # one forward: one copy's memory, without another pass
        first = _looked_at(model, x, target) if of == "saliency" else attribute(model, x, of, target, options=own)
    box_found(first.detections, first.target_detection)  # no box: no noisy copies to run
    same = first.target_index if first.target_index is not None else target
    if first.target.startswith("seg:"):  # a segmentation: the class map (in its box) resolved on x
        same = first.target
    lost = []  # a detector's noisy copies that lost the box
    if first.target_detection is not None:  # a detector: every copy asked about the object found on x
        same = box_target(first.detections[first.target_detection])

    def base(noisy: torch.Tensor) -> np.ndarray:
        try:
            return attribute(model, noisy, of, same, options=own).map
        except SpecError:
            if first.target_detection is None:
                raise
            lost.append(1)  # the noise hid the object: no score, no gradient
            return np.zeros(_map_shape(x), np.float32) if first.map is None else np.zeros_like(first.map)

    many, batch = None, 1
    if of == "saliency" and first.target_detection is not None and x.shape[0] == 1:
        with torch.no_grad():
            followed = follow(module, module(x), same, labels)

        def many(noisy: torch.Tensor) -> np.ndarray:  # each copy's own gradient of its score of the object
            return _box_saliency_many(module, noisy, followed, lost)

        batch = pick_batch(module, x, samples, grad=True, max_memory=ig.get("max_memory"))
    elif of == "saliency" and x.ndim >= 2 and x.shape[0] == 1 and (first.target_index is not None or target == "sum"
                                                                     or first.target.startswith("text:")):
        layout, resolved = Layout(module, grad=True), parse_target(same)

        def many(noisy: torch.Tensor) -> np.ndarray:  # saliency of many copies in one pass: each its own gradient
            with eval_norms(module):
                return layout.run(lambda copies: _saliency_many(module, copies, resolved), noisy)

        batch = pick_batch(module, x, samples, grad=True, max_memory=ig.get("max_memory"),
                           need=counted.per_copy(x, 1, grad=True) if counted.total else None)
    found, used, sigma = smooth(x, base, kind, samples, noise, seed, cancel, progress, many, batch, draws)
    lost_note = (f"{len(lost)} of {samples} noisy copies lost the box (their maps count as 0)",) if lost else ()
    return Attribution(kind, found, first.target, first.target_index, warnings=first.warnings + lost_note,
                       detections=first.detections, target_detection=first.target_detection,
                       details=(("kind", kind), ("of", of), ("samples", samples), ("noise", noise), ("sigma", sigma),
                                ("seed", used)) + tuple((k, v) for k, v in (own or {}).items()
                                                         if k in ("steps", "quadrature")))  # of ig: its path


def _looked_at(model, x: torch.Tensor, target) -> Attribution:
    """What saliency on x says without its backward pass: the target it resolves (a class, a segment, a
    detection) and its warnings, no map. SmoothGrad's look at x before the noisy copies: one forward instead of
    a saliency pass (resnet50: 0.2 s of a 4.3 s job)."""
    module, labels = _unwrap(model)
    result = run(module, x, RunSpec((), frozenset(), (), parse_target(target), input_grad=False, stats=False), labels)
    said = zero_head_warning(module)  # what the saliency's backward would have said
    return Attribution("saliency", None, result.target, result.target_index,
                       warnings=tuple(result.warnings) + ((said,) if said is not None else ()), **boxes_of(result))


def _map_shape(x: torch.Tensor) -> tuple[int, ...]:
    """The shape of saliency's map of x (one item): max over channels where there are some."""
    return tuple(x.shape[2:]) if x.ndim >= 3 else tuple(x.shape[1:])


def _box_saliency_many(module: nn.Module, xs: torch.Tensor, followed, lost: list) -> np.ndarray:
    """Saliency maps of a batch of copies of a detector's image: max over channels of |d score_i / d copy_i|,
    score_i the copy's score of the followed object (0, and a map of 0, where it lost it: added to `lost`)."""
    xs = xs.detach().requires_grad_(True)
    with torch.enable_grad():
        score = followed.scores(module(xs), lost).sum()
        (grad,) = torch.autograd.grad(score, xs) if score.requires_grad else (torch.zeros_like(xs),)
    return grad.abs().amax(dim=1).detach().cpu().numpy()


def smoothgrad_map(model, x, target, layer, options) -> Attribution:
    return smoothgrad(model, x, target, **options)
