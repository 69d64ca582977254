"""Integrated gradients (Sundararajan et al. 2017): the map (x - b) * sum_i w_i * grad f(b + a_i (x - b)),
(C, H, W) and signed, with the quadrature's nodes a_i and weights w_i on [0, 1] as captum computes them,
and the completeness gap |sum(map) - (f(x) - f(b))| that says how well `steps` points integrate.

`steps="auto"` takes as many points as the path needs: a nested trapezoid rule on 5 points (4 intervals), then
9, 17, ... (each level adds the midpoints and reuses every gradient already taken) until the gap is at most
`tolerance` times |f(x) - f(b)| or the next level would pass `max_steps` points (captum's advice, "check the
convergence delta", done for the user).

The path points run in batches (`batch` points a pass, in `core.fast_passes`' layout and BatchNorm); the class is
resolved once, on x itself, so every point's gradient is of the same class. Plain torch autograd, no hooks:
the model is left as it was.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
from torch import nn

from ..detection.follow import follow
from ..detection.outputs import is_detection_output
from ..common.errors import SpecError
from ..target.objective import objective, parse_target, primary_output, same_target
from ..records.methods import QUADRATURES, gauss_too_many
from ..sources.loaded import LoadedModel
from .passes.batching import LeafBytes, check_batch, each_pass, fit_batch, pick_batch, takes
from .passes.layout import Layout, eval_norms
from .quadrature import gauss_legendre
from .record import Attribution, _device, _unwrap


@dataclass(frozen=True)
class PathNodes:
    """`count` points on [0, 1] made a pass at a time: `at(start, stop)` gives the nodes a_i and weights w_i of
    points start..stop-1 (float64), so a billion Riemann points allocate one pass's worth, never the path."""

    count: int
    at: Callable[[int, int], tuple[np.ndarray, np.ndarray]]


def path_points(quadrature: str, steps: int) -> PathNodes:
    """`steps` points on [0, 1]: Gauss-Legendre's, or a Riemann sum's (left, right, middle, trapezoid) — the
    same nodes and weights as captum's approximation_methods. Gauss-Legendre's nodes are found up front (at
    most GAUSS_MOST); a Riemann sum's are worked out for each pass."""
    if quadrature not in QUADRATURES:
        raise SpecError(f"Unknown quadrature {quadrature!r}. Use one of: {', '.join(QUADRATURES)}.")
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
        raise SpecError(f"steps must be a whole number of at least 1, not {steps!r}.")
    n = int(steps)
    if quadrature == "gausslegendre":
        if gauss_too_many(quadrature, n):
            raise SpecError(gauss_too_many(quadrature, n))
        nodes, weights = gauss_legendre(n)  # O(n) memory: leggauss's companion matrix is n x n
        alphas, weights = (nodes + 1) / 2, weights / 2
        return PathNodes(n, lambda start, stop: (alphas[start:stop], weights[start:stop]))
    if quadrature == "riemann_trapezoid":
        if n < 2:
            raise SpecError("riemann_trapezoid needs at least 2 steps.")
        return PathNodes(n, lambda start, stop: _trapezoid(n, start, stop))
    first = {"riemann_left": 0.0, "riemann_right": 1.0 / n, "riemann_middle": 0.5 / n}[quadrature]
    return PathNodes(n, lambda start, stop: (first + np.arange(start, stop) / n, np.full(stop - start, 1.0 / n)))


def _trapezoid(n: int, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
    """Points start..stop-1 of captum's trapezoid rule on n points: np.linspace(0, 1, n)'s nodes (i times
    1 / (n - 1), the last 1), weights 1/n inside and 1/(2n) at the ends (they sum to (n-1)/n, not 1; kept so
    that maps equal captum's; the completeness gap shows it)."""
    index = np.arange(start, stop)
    alphas = index * (1.0 / (n - 1))
    alphas[index == n - 1] = 1.0
    weights = np.full(stop - start, 1.0 / n)
    weights[(index == 0) | (index == n - 1)] = 0.5 / n
    return alphas, weights


def path_nodes(quadrature: str, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Every point's (alphas, weights) at once (`path_points`): for a short path, tests and figures."""
    points = path_points(quadrature, steps)
    return points.at(0, points.count)


AUTO_FIRST = 4  # steps auto: the first level's intervals (5 points)


def check_auto(tolerance, max_steps) -> None:
    """One-line errors for steps auto's tolerance and cap."""
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not 0 < tolerance <= 1:
        raise SpecError(f"The tolerance is a fraction of |f(x) - f(baseline)| above 0 and at most 1, not {tolerance!r}.")
    if isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer)) or max_steps < AUTO_FIRST + 1:
        raise SpecError(f"max_steps is a whole number of points, at least {AUTO_FIRST + 1}, not {max_steps!r}.")


def integrated_gradients(model: LoadedModel | nn.Module, x: torch.Tensor, target=None, steps: int | str = 50,
                         quadrature: str = "gausslegendre", baseline: torch.Tensor | None = None,
                         batch: int | None = None, max_memory: int | None = None, cancel=None,
                         progress=None, tolerance: float = 0.01, max_steps: int = 512) -> Attribution:
    """The integrated gradients of the target's score for one input `x` (1, C, H, W), from `baseline`
    (zeros in the model's input space when None), `batch` path points a pass (None: as many as the free
    memory holds, at most `max_memory` bytes; core.batching). `steps="auto"`: points added until the gap is
    within `tolerance` (see the module). `progress(done, total)` after each batch of points; `cancel()` True
    stops between batches (RunCancelled)."""
    module, labels = _unwrap(model)
    if x.ndim < 2 or x.shape[0] != 1:
        raise SpecError(f"Integrated gradients explain one input at a time; got a batch of shape {tuple(x.shape)}.")
    check_batch(batch)
    auto = steps == "auto"
    if auto:
        check_auto(tolerance, max_steps)
        points = None
    else:
        points = path_points(quadrature, steps)
    device = _device(module)
    x = x.detach().to(device)
    b = torch.zeros_like(x) if baseline is None else baseline.detach().to(device=device, dtype=x.dtype)
    if b.shape != x.shape:
        raise SpecError(f"The baseline's shape {tuple(b.shape)} is not the input's {tuple(x.shape)}.")
    together = takes(module, 2)  # x and the baseline in one forward, unless the model takes one copy a forward
    counted = LeafBytes(module) if batch is None else contextlib.nullcontext()
    with torch.no_grad(), counted:  # one copy's memory, on the forward that resolves the class
        answers = [module(torch.cat([x, b]))] if together else [module(x), module(b)]
    boxes = {}
    if is_detection_output(answers[0]):  # a detector: every point's score of the object found on x
        answer_of = (lambda i: answers[0][i:i + 1]) if together else answers.__getitem__  # 0: x's, 1: b's
        followed = follow(module, answer_of(0), target, labels)
        index, resolved, boxes = followed.label, followed.resolved, followed.record()

        def score(output) -> torch.Tensor:
            return followed.scores(output).sum()
        f_x, f_b = (float(followed.scores(answer_of(i))[0]) for i in (0, 1))
    else:
        firsts = [primary_output(answer) for answer in answers]
        first_of = (lambda i: firsts[0][i:i + 1]) if together else firsts.__getitem__  # 0: x's, 1: b's
        first, hw = first_of(0), tuple(x.shape[-2:])  # hw: a seg: target's box is in input pixels
        _obj, index, resolved = objective(first, parse_target(target), hw, module)
        same = same_target(index, resolved)  # every point: x's class (a segmentation's class map, in its box)

        def score(output) -> torch.Tensor:
            return objective(primary_output(output), same, hw, module)[0]
        f_x, f_b = (float(objective(first_of(i), same, hw, module)[0]) for i in (0, 1))
    if batch is None:
        batch = pick_batch(module, x, AUTO_FIRST + 1 if auto else points.count, grad=True, max_memory=max_memory, device=device,
                           need=counted.per_copy(x, 2 if together else 1, grad=True))
    else:
        batch = fit_batch(module, batch)

    def gradient(points: torch.Tensor) -> torch.Tensor:
        points = points.requires_grad_(True)
        obj = score(module(points))
        # a detector that lost the box at every point of the batch: no score, no gradient
        return torch.autograd.grad(obj, points)[0] if obj.requires_grad else torch.zeros_like(points)

    layout = Layout(module, grad=True)
    shape = (-1,) + (1,) * (x.ndim - 1)

    def weighted(points: PathNodes, done: int = 0, total_points: int | None = None) -> torch.Tensor:
        """sum_i w_i grad f(b + a_i (x - b)) over the points, in passes (each pass's nodes made for it)."""
        total = torch.zeros_like(x)
        told = None if progress is None else (lambda d, _t: progress(done + d, total_points or points.count))
        for part in each_pass(points.count, batch, "Integrated gradients", cancel, told):
            a, w = (torch.as_tensor(v, dtype=x.dtype, device=device).reshape(shape)
                    for v in points.at(part.start, part.stop))
            grad = layout.run(gradient, b + a * (x - b))
            total += (w * grad).sum(dim=0, keepdim=True)
        return total

    def gap_of(total: torch.Tensor) -> tuple[np.ndarray, float]:
        found = ((x - b) * total)[0].detach().cpu().numpy()
        return found, abs(float(found.sum(dtype=np.float64)) - (f_x - f_b))

    with eval_norms(module):
        if auto:
            found, gap, used = _nested_trapezoid(weighted, gap_of, tolerance * abs(f_x - f_b), max_steps)
        else:
            (found, gap), used = gap_of(weighted(points)), int(steps)
    settings = (("steps", used), ("quadrature", "nested trapezoid" if auto else quadrature))
    notes = ()
    if auto:
        settings += (("steps asked", "auto"), ("tolerance", float(tolerance)), ("max_steps", int(max_steps)))
        within = tolerance * abs(f_x - f_b)
        if gap > within:  # stopped by the cap: the levels reach 4 * 2**k + 1 points, not max_steps itself
            notes = (f"steps auto stopped at {used} points with the gap {gap:.3g} above the tolerance's {within:.3g}: "
                     f"its levels take 5, 9, 17, 33, ... points, and the next, {2 * used - 1}, would pass max_steps "
                     f"{int(max_steps)}.",)
    return Attribution("ig", found, str(resolved), index, completeness_gap=gap, **boxes, notes=notes,
                       details=settings + (("baseline", "zero" if baseline is None else "given"), ("batch", batch),
                                           ("f(x) - f(baseline)", f_x - f_b)))


def _nested_trapezoid(weighted, gap_of, within: float, most: int) -> tuple[np.ndarray, float, int]:
    """(map, gap, points) of the trapezoid rule on n = 4, 8, 16, ... intervals: each level's new points are the
    last level's midpoints, whose gradients are summed into the ones already taken (the rule is
    T_n = (1/n) (g(0)/2 + g(1)/2 + sum of the inner points' g)); it stops when the gap is at most `within` or
    the next level would take more than `most` points."""
    n = AUTO_FIRST
    ends = weighted(PathNodes(2, lambda s, e: (np.array([0.0, 1.0])[s:e], np.array([0.5, 0.5])[s:e])), 0, n + 1)
    inner = weighted(PathNodes(n - 1, lambda s, e: (np.arange(s + 1, e + 1) / n, np.ones(e - s))), 2, n + 1)
    found, gap = gap_of((ends + inner) / n)
    while gap > within and 2 * n + 1 <= most:
        level = PathNodes(n, lambda s, e, n=n: ((2 * np.arange(s, e) + 1) / (2 * n), np.ones(e - s)))
        inner = inner + weighted(level, n + 1, 2 * n + 1)
        n *= 2
        found, gap = gap_of((ends + inner) / n)
    return found, gap, n + 1


def ig_map(model, x, target, layer, options) -> Attribution:
    return integrated_gradients(model, x, target, **options)
