"""The short Python API: the CLI and the app are thin layers over these."""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Iterable

import torch

from .common.arguments import checked, need_instance, need_texts
from .sources.devices import resolve_device
from .edits import Edit
from .edits import check_edits as check_concept_edits
from .engine.edit_reach import check_edits_reach
from .engine.result import RunResult
from .engine.runner import run
from .common.errors import ArgumentValueError, SpecError
from .sources.layers import LayerTree, build_layer_tree
from .target.objective import Target, parse_target
from .target.prompts import check_prompts
from .records.protocols import DEFAULT_PROTOCOL, ROAD_NOISE, ROAD_PERCENTAGES
from .runspec import RunSpec
from .sources.sharing import Sharing
from .sources.loaded import LoadedModel, sharing_of, tree_of


def layer_tree(model: LoadedModel, example: torch.Tensor | None = None) -> LayerTree:
    """The module tree with output shapes and calls per forward (one small no-grad run)."""
    need_instance(model, LoadedModel, "model", "a LoadedModel from load_model(...)")
    need_instance(example, (torch.Tensor, type(None)), "example", "a torch.Tensor or None")
    if example is None:
        example = model.example_input()
    if example is not None:
        example = example.to(model.device)
    return build_layer_tree(model.module, example)


def capture(
    model: LoadedModel,
    inputs: torch.Tensor,
    layers: str | Iterable[str] = "all",
    sites: str | Iterable[str] = ("output", "grad_output"),
    edits: Iterable[Edit | str] = (),
    target: str | int | Target | None = None,
    device: str | torch.device | None = "cpu",
    input_grad: bool = False,
    cancel: threading.Event | None = None,
    sharing: Sharing | None = None,
) -> RunResult:
    """Run `model` on `inputs` with hooks on the layers matching `layers` (paths, globs, `all`, `type:X`).

    `sharing`: what earlier runs showed about the model (inspector.core.sources.sharing); by default the
    one this `LoadedModel` keeps, so repeated calls share memory where that is safe."""
    _check_arguments(model, inputs, cancel, sharing)
    if isinstance(layers, str) and not layers.replace(",", "").strip():
        raise SpecError("No layers given (the layer list is empty): name paths or globs (conv1, layer4.*), "
                        "all, or type:Conv2d.")
    said = check_prompts(model.module, parse_target(target))  # a text: target's prompts, before the model runs
    dev = resolve_device(device)
    if model.device != dev:
        model.module.to(dev)
    tree = tree_of(model)
    patterns = layers if isinstance(layers, str) else need_texts(layers, "layers", "conv1,layer4.*")
    spec = RunSpec.make((), sites, edits, target, input_grad)
    spec = replace(spec, layers=tuple(tree.select(patterns, params="params" in spec.sites)))
    check_edits_reach(spec.edits, tree)
    check_concept_edits(spec.edits, model)  # the loaded model: a dictionary of other weights is refused too
    result = run(model.module, inputs, spec, model.labels, cancel, sharing or sharing_of(model))
    for note in said:
        result.log("warning", note)
    return result


def _check_arguments(model, inputs, cancel, sharing) -> None:
    need_instance(model, LoadedModel, "model", "a LoadedModel from load_model(...)")
    need_instance(inputs, torch.Tensor, "inputs", "a torch.Tensor (load_input(...) makes one)")
    need_instance(cancel, (threading.Event, type(None)), "cancel", "a threading.Event or None")
    need_instance(sharing, (Sharing, type(None)), "sharing", "a Sharing or None")


@checked
def attribute(
    model: LoadedModel,
    inputs: torch.Tensor,
    method: str = "gradcam",
    target: str | int | Target | None = None,
    layer: str | None = None,
    options: dict | None = None,
    metrics: Iterable[str] = (),
    metric_steps: int | None = None,
    device: str | torch.device | None = "cpu",
    protocol: str = DEFAULT_PROTOCOL,
    road_noise: float = ROAD_NOISE,
    road_seed: int | None = None,
    road_percentages: Iterable[float] = ROAD_PERCENTAGES,
):
    """One attribution map of `inputs` (one image): `method` is saliency, gradcam, guided, guided-gradcam,
    rollout, ig, smoothgrad or occlusion, with its `options` as the CLI names them (steps, quadrature,
    batch, max_memory; of, kind, samples, noise, seed; window, stride; baseline, blur_sigma, baseline_seed;
    sign: positive, negative, absolute or signed, how the map is drawn and scored).
    `metrics` (deletion, insertion, road) scores the map: deletion and insertion under `protocol` (inspector:
    `metric_steps` K, default 50, over the map's baseline; rise2018: the RISE reference code's settings, no steps to
    give), road with ROAD's `road_noise` (sigma, in the input's units), `road_seed` (None: a new one, said in the
    curves' settings) and `road_percentages` removed. Returns an Attribution: `.map`, `.target_index`, `.layer`,
    `.details`, `.completeness_gap`, `.curves` (each with its protocol and settings), `.notes`, `.warnings`."""
    from .attribution import attribute as make

    wanted = _metrics(metrics, "attribute")
    scoring = _scoring(wanted, metric_steps, protocol, road_noise, road_seed, road_percentages, "attribute")
    dev = resolve_device(device)
    if model.device != dev:
        model.module.to(dev)
    x = inputs.to(dev)
    found = make(model, x, method, target, layer, options)
    return _scored(model, x, found, wanted, metric_steps, options, scoring) if wanted else found


@checked
def each_box(
    model: LoadedModel,
    inputs: torch.Tensor,
    method: str = "gradcam",
    layer: str | None = None,
    options: dict | None = None,
    min_score: float | None = None,
    most: int = 9,
    metrics: Iterable[str] = (),
    metric_steps: int | None = None,
    device: str | torch.device | None = "cpu",
    protocol: str = DEFAULT_PROTOCOL,
    road_noise: float = ROAD_NOISE,
    road_seed: int | None = None,
    road_percentages: Iterable[float] = ROAD_PERCENTAGES,
) -> list:
    """A detector's boxes explained one at a time: `method`'s map (as `attribute` makes it, target `box:K`)
    for each box scoring at least `min_score` (None: as the app shows them), the best `most`, best first,
    each scored by `metrics` over its own box (the scores' settings as `attribute` takes them; ROAD's seed one for
    every box). `inspector.core.attribution.per_box.tiled` puts them side by side."""
    from .attribution.per_box import each_box as explain

    if inputs.ndim != 4 or 0 in inputs.shape:  # a detector's images; checked before it runs on them
        raise ArgumentValueError(f"each_box(): inputs must be images (N, C, H, W), not shape {tuple(inputs.shape)}.")
    wanted = _metrics(metrics, "each_box")
    scoring = _scoring(wanted, metric_steps, protocol, road_noise, road_seed, road_percentages, "each_box")
    if "road" in wanted and scoring["road_noise"] > 0 and scoring["road_seed"] is None:
        from .sources.seeds import new_seed

        scoring["road_seed"] = new_seed()  # one seed for every box, said in each box's curves
    dev = resolve_device(device)
    if model.device != dev:
        model.module.to(dev)
    x = inputs.to(dev)
    found = explain(model, x, method, layer, options, min_score, most)
    return [_scored(model, x, one, wanted, metric_steps, options, scoring) for one in found] if wanted else found


def _metrics(metrics, function: str) -> tuple[str, ...]:
    from .attribution.scores.faithfulness import METRICS

    wanted = tuple(need_texts(metrics, "metrics", "deletion,insertion")) if not isinstance(metrics, str) \
        else tuple(m.strip() for m in metrics.split(",") if m.strip())
    unknown = [m for m in wanted if m not in METRICS]
    if unknown:
        raise SpecError(f"{function}(): unknown metric {unknown[0]!r}; metrics: {', '.join(METRICS)}.")
    return wanted


def _scoring(wanted, metric_steps, protocol, road_noise, road_seed, road_percentages, function: str) -> dict:
    """The scores' settings (scored()'s keywords), checked before the method runs: a bad one is one line naming
    `function`."""
    from .records.protocols import GAMES, check_protocol, check_road
    from .sources.seeds import check_seed

    try:
        rule = check_protocol(protocol)
        if metric_steps is not None and rule.steps is None and any(m in GAMES for m in wanted):
            raise SpecError(f"the protocol {rule.name} fixes its steps ({rule.pixels_a_step} pixels a step): leave "
                            "metric_steps out.")
        percentages = check_road(road_noise, road_percentages)
        seed = check_seed(road_seed, "road_seed")
    except SpecError as exc:
        raise SpecError(f"{function}(): {str(exc)[:1].lower()}{str(exc)[1:]}") from None
    return {"protocol": rule.name, "road_noise": road_noise, "road_seed": seed, "road_percentages": percentages}


def _scored(model, x, found, wanted, metric_steps, options, scoring: dict):
    from .attribution.scores.faithfulness import scored

    given = dict(options or {})
    return scored(model, x, found, wanted, metric_steps, given.get("baseline"), batch=given.get("batch"),
                  max_memory=given.get("max_memory"), blur_sigma=given.get("blur_sigma"),
                  baseline_seed=given.get("baseline_seed"), **scoring)
