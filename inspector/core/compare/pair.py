"""Two models run on the same capture: loaded as a pair (errors name both sides), run one after the
other with the objective resolved on the first, and compared (`inspector.core.compare.diff`).
`diff_models` is the API and the CLI's path; `run_against` the app's (a second Workbench)."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from typing import Iterable, Sequence

import numpy as np
import torch

from ..common.arguments import checked, need_flag, need_instance, need_text, need_texts
from ..sources.devices import resolve_device
from ..edits import check_edits as check_concept_edits
from ..common.errors import MismatchError, ModelLoadError, RunError, SpecError
from ..target.objective import Target
from ..engine.runner import run
from ..runspec import RunSpec
from ..sources.loaded import LoadedModel, sharing_of, tree_of
from ..sources.loader import load_model, weights_shown
from .arguments import second_model
from .diff import DEFAULT_THRESHOLD, ModelDiff, compare_results, same_objective


def describe(model) -> str:
    """`resnet18 (weights a.safetensors)`: how messages name a side."""
    return f"{model.source} (weights {model.weights})"


def check_devices(first, second, device) -> None:
    """With no device given, both models must already be on one device."""
    if device is None and first.device != second.device:
        raise MismatchError(f"The two models are on different devices: {describe(first)} on {first.device}, "
                            f"{describe(second)} on {second.device}. Pass one device for both.")


@checked
def diff_models(first: LoadedModel, second: LoadedModel, inputs: torch.Tensor, layers: str | Iterable[str] = "all",
                sites: str | Iterable[str] = ("output", "grad_output"),
                target: str | int | np.integer | Target | None = None, device: str | torch.device | None = "cpu",
                threshold: float = DEFAULT_THRESHOLD, edits: Sequence = (), second_edits: Sequence | None = None,
                input_grad: bool = False, cancel: threading.Event | None = None, stats: bool = False) -> ModelDiff:
    """Run the same capture on two `LoadedModel`s and compare them (`compare_results`).

    `layers` are selected on the first model; the second gets the same paths where it has them
    (a path it lacks is listed in `only_in_first`). `edits` apply to the first model and, unless
    `second_edits` is given, to the second too. `device=None` runs each where it is (they must be
    on one device). `stats`: also work out per-capture statistics (the comparison does not need them)."""
    import torch

    for model, what in ((first, "first"), (second, "second")):
        need_instance(model, LoadedModel, what, "a LoadedModel from load_model(...) or load_pair(...)")
    need_instance(inputs, torch.Tensor, "inputs", "a torch.Tensor (load_input(...) makes one)")
    if not isinstance(layers, str):
        need_texts(layers, "layers", "conv1,layer4.*")
    check_devices(first, second, device)
    dev = first.device if device is None else resolve_device(device)
    for model in (first, second):
        if model.device != dev:
            model.module.to(dev)
    paths = tree_of(first).select(layers if isinstance(layers, str) else list(layers))
    own = set(dict(second.module.named_modules()))
    try:  # the second model's own matches, so that paths only it has are listed too
        second_paths = tree_of(second).select(layers if isinstance(layers, str) else list(layers))
    except SpecError:
        second_paths = [p for p in paths if p in own]
    spec = replace(RunSpec.make(paths, sites, edits, target, input_grad), stats=stats)
    second_edits = spec.edits if second_edits is None else RunSpec.make((), (), second_edits).edits
    check_concept_edits(spec.edits, first)  # a dictionary learned on another model (or weights): refused before
    check_concept_edits(second_edits, second)  # any run
    names = (describe(first), describe(second))
    started = time.perf_counter()
    result_a = run(first.module, inputs, spec, first.labels, cancel, sharing_of(first))
    second_spec = replace(spec, layers=tuple(second_paths), edits=second_edits, target=same_objective(result_a))
    try:
        result_b = run(second.module, inputs, second_spec, second.labels, cancel, sharing_of(second))
    except (RunError, SpecError) as exc:
        raise type(exc)(f"The second model, {names[1]}: {exc} (the first, {names[0]}, ran)") from exc
    ran = time.perf_counter()
    diff = compare_results(result_a, result_b, threshold, names)
    diff.timings = {"runs_s": ran - started, "compare_s": time.perf_counter() - ran}
    return diff


@checked
def load_pair(source: str, weights: str | None, against: str | None = None, against_model: str | None = None,
              against_weights: str | None = None, trust: bool = False, seed: int | None = None, progress=None,
              against_seed: int | None = None):
    """The two models a diff compares: `source` with `weights`, and `source` with `against` (a second
    weights file) or `against_model` with `against_weights`. Each side has its own seed: random
    weights of the second model are made under `against_seed` (a new one when None), never the
    first's. A load failure names both sides."""
    need_flag(trust, "trust")
    need_text(source, "source")
    for value, what in ((against, "against"), (against_model, "against_model"), (against_weights, "against_weights")):
        if value is not None:
            need_text(value, what)
    second_source, second_weights = second_model(source, against, against_model, against_weights)
    first_name = f"{source} (weights {weights_shown(source, weights)})"
    second_name = f"{second_source} (weights {weights_shown(second_source, second_weights)})"
    try:
        first = load_model(source, weights, trust, progress, seed=seed)
    except ModelLoadError as exc:
        raise type(exc)(f"The first model, {first_name}, did not load (the second would be {second_name}): "
                        f"{exc}") from exc
    try:
        second = load_model(second_source, second_weights, trust, progress, seed=against_seed)
    except ModelLoadError as exc:
        raise type(exc)(f"The second model, {second_name}, did not load (the first is {first_name}): "
                        f"{exc}") from exc
    return first, second


def run_against(bench, first, x, request, result, cancel: threading.Event | None = None, progress=None,
                phase=None) -> ModelDiff:
    """The app's comparison with a second model: `request.against.model` loaded (or kept) in `bench`,
    a second `Workbench`, run on the first model's input tensor `x` with the request's layers (those
    it has) and sites, its own edits, and the objective resolved on the first model's `result`."""
    against = request.against
    asked = against.model
    first_name = describe(first)
    try:
        second, _ = bench.load(asked, progress)
    except ModelLoadError as exc:
        said = weights_shown(asked.source, asked.weights)
        raise type(exc)(f"The second model, {asked.source} (weights {said}), did not load "
                        f"(the first is {first_name}): {exc}") from exc
    check_concept_edits(against.edits, second)  # its own edits: a dictionary of another model is refused
    bench.move_to(request.device)
    own = set(dict(second.module.named_modules()))
    spec = replace(request.spec, layers=tuple(p for p in request.spec.layers if p in own),
                   edits=tuple(against.edits), target=same_objective(result), stats=False, stats_now=None)
    names = (first_name, describe(second))
    told = None if phase is None else (lambda name: phase(f"second model {name}"))
    try:
        second_result = run(second.module, x.to(bench.move_to(request.device)), spec, second.labels, cancel,
                            bench.sharing, told)
    except (RunError, SpecError) as exc:
        raise type(exc)(f"The second model, {names[1]}: {exc} (the first, {names[0]}, ran)") from exc
    return compare_results(result, second_result, against.threshold, names)
