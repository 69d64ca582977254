"""Attribution maps, each one engine run: saliency, Grad-CAM, guided backprop, guided Grad-CAM.

Maps are for the first batch item and the objective the target picks (top1 for
classifiers). Every hook is the engine's, so the model keeps exactly the hooks it had.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import sys
import weakref
from collections import Counter

import numpy as np
import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from .attention.site import supports_attention
from .attention.supported import supported_text
from .attribution_record import Attribution, _device, _unwrap, boxes_of
from .baselines import make_baseline
from .batching import LeafBytes, parse_memory, pick_batch
from .cam_layers import auto_gradcam_layer, upsample
from .detection.follow import follow
from .detection.levels import level_of_box, pooled_levels
from .detection.outputs import is_detection_output
from .drise import drise
from .eigencam import eigencam
from .engine import RunSpec, run, zero_head_warning
from .errors import RunError, SpecError
from .fast_passes import Layout, eval_norms
from .guided import APPROXIMATED_TYPES, guided_edits, split_guided
from .integrated import integrated_gradients
from .layers import channel_layouts
from .objective import Target, objective, parse_target, primary_output
from .occlusion import occlusion
from .records.detections import box_target
from .records.methods import METHODS, SCORES_BASELINE, SIGN_HELP, SMOOTHED, Method, Option
from .records.signs import SIGNS
from .records.tokens import TokenGrid, is_channels_last, token_maps
from .result import RunResult
from .smooth import NoiseCopies, check_smoothing, fresh_seed, smooth
from .sources.grids import token_grid
from .sources.loaded import LoadedModel, detects

#: The activation modules the guided rule reaches (inspector.core.guided), as torch classes.
APPROXIMATED = tuple(getattr(nn, name) for name in APPROXIMATED_TYPES)
#: Functions that, called outside those modules, no module hook can reach.
_RECTIFIERS = frozenset({"relu", "relu_", "relu6", "silu", "gelu", "hardswish", "leaky_relu",
                         "leaky_relu_", "elu", "elu_", "mish"})


#: What every method that explains a box says when the detector found none (ig's and occlusion's words, `follow`).
NOTHING_DETECTED = "The model detected nothing above its score threshold on this input: there is no box to explain."


def _box_found(detections, target_detection) -> None:
    """A detector's run whose default target found no box (the engine's `auto` then scores nothing: a map of 0
    and a warning) explains nothing: SpecError, as `box:0` and ig, occlusion and D-RISE already refuse."""
    if detections is not None and target_detection is None:
        raise SpecError(NOTHING_DETECTED)


def _first_grad(result: RunResult) -> np.ndarray:
    if result.input_grad is None:
        raise RunError("No gradient reached the model input: " + ("; ".join(result.warnings) or "unknown reason."))
    return result.input_grad[0]


def _saliency(model, x: torch.Tensor, target) -> tuple[np.ndarray, RunResult]:
    module, labels = _unwrap(model)
    spec = RunSpec((), frozenset(), (), parse_target(target), input_grad=True, stats=False)
    result = run(module, x, spec, labels)
    _box_found(result.detections, result.target_detection)
    grad = np.abs(_first_grad(result))
    return (grad.max(axis=0) if grad.ndim >= 2 else grad), result


def saliency(model: LoadedModel | nn.Module, x: torch.Tensor, target=None) -> np.ndarray:
    """Input-gradient magnitude: max over channels of |d objective / d input|, (H, W) for images."""
    return _saliency(model, x, target)[0]


def cam_from_result(result: RunResult, layer: str, grid: TokenGrid | None = None,
                    channels_last: bool | None = None) -> np.ndarray:
    """Grad-CAM (h, w) from a run that captured `layer:output` and `layer:grad_output`:
    ReLU(sum_k alpha_k A^k), alpha_k the spatial mean of the gradient, first batch item. Token
    outputs (B, N, C) on the model's patch `grid` count as C maps of it (prefix tokens left out);
    a 4-D output is (B, H, W, C) where the model says `channels_last` of the layer (`is_channels_last`)."""
    acts, grads = result.captures.get(f"{layer}:output"), result.captures.get(f"{layer}:grad_output")
    if grid is not None and acts is not None and grads is not None and acts.array is not None \
            and grads.array is not None and (maps := token_maps(acts.array, grid)) is not None:
        a, g = torch.from_numpy(maps[None]).float(), torch.from_numpy(token_maps(grads.array, grid)[None]).float()
        alpha = g.mean(dim=(2, 3), keepdim=True)
        return torch.relu((alpha * a).sum(dim=1))[0].numpy()
    if acts is None or acts.array is None or acts.array.ndim != 4:
        shape = "nothing" if acts is None or acts.array is None else f"shape {acts.array.shape}"
        raise SpecError(f"Grad-CAM needs one (N, C, H, W) output at {layer}; it gives {shape}.")
    if grads is None or grads.array is None:
        raise RunError(f"No gradient reached {layer}; the objective ({result.target}) does not depend on it.")
    a, g = torch.from_numpy(acts.array[:1]).float(), torch.from_numpy(grads.array[:1]).float()
    if is_channels_last(tuple(acts.array.shape), channels_last):  # Swin's and ConvNeXt's (N, H, W, C) blocks
        a, g = a.permute(0, 3, 1, 2), g.permute(0, 3, 1, 2)
    alpha = g.mean(dim=(2, 3), keepdim=True)
    return torch.relu((alpha * a).sum(dim=1))[0].numpy()


def _channels_last_at(module: nn.Module, x: torch.Tensor, result: RunResult, layer: str) -> bool | None:
    """What the model says of the layout of `layer`'s 4-D output (`layers.channel_layouts`, once per model);
    None for other outputs."""
    acts = result.captures.get(f"{layer}:output")
    if acts is None or acts.array is None or acts.array.ndim != 4:
        return None
    return channel_layouts(module, x.detach().to(_device(module))).get(layer)


def gradcam(model: LoadedModel | nn.Module, x: torch.Tensor, target=None, layer: str | None = None) -> Attribution:
    """Grad-CAM at `layer` (default: `auto_gradcam_layer`, the feature map the head reads). Backward stops
    at that layer."""
    module, labels = _unwrap(model)
    if x.ndim != 4:
        raise SpecError(f"Grad-CAM needs an image input (N, C, H, W); got shape {tuple(x.shape)}.")
    grid = token_grid(module, tuple(x.shape[-2:]))
    notes = ()
    levels = pooled_levels(module) if layer is None else None
    if levels:  # an R-CNN: every level its box pooler reads, then the one it read the box at
        spec = RunSpec(tuple(levels), frozenset({"output", "grad_output"}), (), parse_target(target), stats=False)
        result = run(module, x, spec, labels)
        _box_found(result.detections, result.target_detection)
        k = result.target_detection
        level = level_of_box(module, x, result.detections[k].box)
        layer = levels[-1 if level is None else level]
        notes = (f"Grad-CAM layer {layer}: the FPN level the box pooler reads box:{k} at (by its size)."
                 if level is not None else f"Grad-CAM layer {layer}: the last level (the box pooler maps none).",)
    else:
        if layer is None:
            layer, notes = auto_gradcam_layer(module, x)
        spec = RunSpec((layer,), frozenset({"output", "grad_output"}), (), parse_target(target), stats=False)
        result = run(module, x, spec, labels)
        _box_found(result.detections, result.target_detection)
    cam = cam_from_result(result, layer, grid, _channels_last_at(module, x, result, layer))
    return Attribution("gradcam", upsample(cam, tuple(x.shape[-2:])), result.target, result.target_index,
                       layer, cam, warnings=tuple(result.warnings), notes=notes, **boxes_of(result))


def _calling_module(frame) -> nn.Module | None:
    """The module whose forward is running in `frame` or a caller of it."""
    while frame is not None:
        if frame.f_code.co_name == "forward":
            owner = frame.f_locals.get("self")
            if isinstance(owner, nn.Module):
                return owner
        frame = frame.f_back
    return None


class _FunctionalActivations(TorchFunctionMode):
    """Records rectifier-like functions called outside the activation modules the edits reach."""

    def __init__(self, module: nn.Module) -> None:
        super().__init__()
        self.paths = {id(m): p for p, m in module.named_modules()}
        self.found: Counter[str] = Counter()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in _RECTIFIERS:
            owner = _calling_module(sys._getframe(1))
            if not isinstance(owner, (nn.ReLU, *APPROXIMATED)):
                where = self.paths.get(id(owner), "?") or "(model)"
                self.found[f"{where} ({type(owner).__name__}) calls {name}()"] += 1
        return func(*args, **(kwargs or {}))


#: The functional activations guided backprop cannot reach, per model and input shape (found on the first pass).
_FUNCTIONAL: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _torch_classes(module: nn.Module) -> list[str]:
    """The names of the torch.nn classes `module` is an instance of (its own class or a base)."""
    return [c.__name__ for c in type(module).__mro__ if c.__module__.startswith("torch.nn")]


def guided_backprop(model: LoadedModel | nn.Module, x: torch.Tensor, target=None) -> Attribution:
    """Guided backprop: `guided()` on every activation module's grad_input; map is (C, H, W).

    At an nn.ReLU this is exact: its own backward zeroes where the input was <= 0 and
    guided() keeps positive gradients. Functional calls (F.relu in a forward) cannot be
    hooked; they are listed in `unreached`.
    """
    module, labels = _unwrap(model)
    named = [(p, m) for p, m in module.named_modules() if p]
    covered, approximated = split_guided((p, _torch_classes(m)) for p, m in named)
    edits = guided_edits(covered, approximated)
    spec = RunSpec((), frozenset(), edits, parse_target(target), input_grad=True, stats=False)
    known = _FUNCTIONAL.setdefault(module, {})
    if tuple(x.shape) in known:  # looked for once per model and input shape: the mode costs ~35% a pass
        result = run(module, x, spec, labels)
        unreached = known[tuple(x.shape)]
    else:
        mode = _FunctionalActivations(module)
        with mode:
            result = run(module, x, spec, labels)
        unreached = tuple(f"{what}" + (f" x{n}" if n > 1 else "") for what, n in mode.found.items())
        known[tuple(x.shape)] = unreached
    _box_found(result.detections, result.target_detection)
    kinds = tuple(sorted({type(m).__name__ for p, m in named if p in set(approximated)}))
    return Attribution("guided", _first_grad(result), result.target, result.target_index, None, None,
                       covered, approximated, unreached, tuple(result.warnings), kinds, **boxes_of(result))


def guided_gradcam(model: LoadedModel | nn.Module, x: torch.Tensor, target=None,
                   layer: str | None = None) -> Attribution:
    """Guided backprop times the upsampled Grad-CAM, (C, H, W); both for the same class."""
    guided = guided_backprop(model, x, target)
    same = Target("index", guided.target_index) if guided.target_index is not None else target
    if guided.detections is not None:  # the same input: the box target picks the same detection
        same = target
    cam = gradcam(model, x, same, layer)
    return Attribution("guided-gradcam", guided.map * cam.map[None], guided.target, guided.target_index,
                       cam.layer, cam.cam, guided.covered, guided.approximated, guided.unreached,
                       guided.warnings + cam.warnings, guided.approximated_types, notes=cam.notes,
                       detections=guided.detections, target_detection=guided.target_detection)


def attention_rollout(model: LoadedModel | nn.Module, x: torch.Tensor) -> Attribution:
    """Attention rollout (Abnar & Zuidema 2020): per attention module in forward order, the heads'
    mean plus the identity (the residual path), rows renormalised; their product; the row of the
    class token (the mean row without one) over the patch grid, upsampled to the input in [0, 1].
    Class-agnostic: no target, no backward."""
    module, labels = _unwrap(model)
    grid = token_grid(module, tuple(x.shape[-2:]))
    if grid is None:
        raise SpecError("Attention rollout needs a transformer whose patch grid is known (timm ViT-family, "
                        "torchvision ViT, transformers ViT-family); this model has none. Use saliency or Grad-CAM.")
    paths = [p for p, m in module.named_modules() if p and supports_attention(m)]
    if not paths:
        raise SpecError(f"Attention rollout needs attention modules ({supported_text()}); this model has none.")
    result = run(module, x, RunSpec(tuple(paths), frozenset({"attention"}), (), parse_target("sum"),
                                    stats=False), labels)
    rollout = None
    for capture in result.captures.values():  # in the order the modules ran
        probs = torch.from_numpy(capture.array[:1]).double().mean(dim=1)[0]  # (N, N), heads averaged
        step = 0.5 * probs + 0.5 * torch.eye(probs.shape[0], dtype=probs.dtype)
        step = step / step.sum(dim=-1, keepdim=True)
        rollout = step if rollout is None else step @ rollout
    n = grid.height * grid.width
    if rollout is None or rollout.shape[0] != grid.prefix + n:
        raise SpecError(f"Attention rollout: the attention does not cover the {grid.describe()} "
                        f"(windowed attention?).")
    row = rollout[0] if grid.prefix else rollout.mean(dim=0)
    cam = row[grid.prefix:].reshape(grid.height, grid.width).float().numpy()
    whose = "the class token's row" if grid.prefix else "the mean row (no class token)"
    return Attribution("rollout", upsample(cam, tuple(x.shape[-2:])), "no class (class-agnostic)", None, None,
                       cam, warnings=(f"across {len(paths)} attention modules, {whose}",) + tuple(result.warnings))


def _saliency_many(module: nn.Module, xs: torch.Tensor, target: Target) -> np.ndarray:
    """Saliency maps of a batch of inputs (eval mode: every item is on its own): max over channels of
    |d objective_i / d input_i|, the objective `target` resolved on the input (a class, `sum`, or a
    segmentation's class map, in its box), summed over the items."""
    xs = xs.detach().requires_grad_(True)
    with torch.enable_grad():
        score = objective(primary_output(module(xs)), target, tuple(xs.shape[-2:]))[0]
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
    draws = NoiseCopies(tuple(x.shape), seed, samples) if noise > 0 else None
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
    _box_found(first.detections, first.target_detection)  # no box: no noisy copies to run
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
    elif of == "saliency" and x.ndim >= 2 and x.shape[0] == 1 and (first.target_index is not None or target == "sum"):
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
                       details=(("of", of), ("samples", samples), ("noise", noise), ("sigma", sigma),
                                ("seed", used)))


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


_KINDS = {"whole": (int,), "number": (int, float), "choice": (str,), "text": (str,),
          "baseline": (str, torch.Tensor), "memory": (int, str)}
#: The options every method takes beyond its own: the scores' baseline, and the sign of its picture.
_ALWAYS = {o.name: o for o in SCORES_BASELINE} | {"sign": Option("sign", "choice", None, SIGN_HELP, SIGNS, auto="the "
                                                                "method's")}


def method_row(method: str) -> Method:
    """The method table's row of `method`; a SpecError naming the methods there are otherwise."""
    row = METHODS.get(method) if isinstance(method, str) else None
    if row is None:
        raise SpecError(f"Unknown method {method!r}. Methods: {', '.join(METHODS)}.")
    return row


def takes_baseline(method: str, of: str | None = None) -> bool:
    """Whether `method` starts from or fills in a baseline of its own (SmoothGrad: whether the map it smooths,
    `of`, does); the rest take one for their scores only."""
    row = method_row(method)
    return row.baseline or (method == "smoothgrad" and of is not None and of != method and takes_baseline(of))


def _kinds(option: Option) -> tuple[type, ...]:
    return _KINDS[option.kind] + ((type(None),) if option.auto is not None else ())


def check_options(method: str, options: dict | None) -> None:
    """One-line errors for an option `method` does not take or of the wrong kind (cancel and progress are
    the caller's), from the method table; every method takes a baseline for its scores and a sign."""
    if options is None:
        return
    if not isinstance(options, dict):
        raise SpecError(f"The options of {method} are a dict (steps=..., window=...), not {type(options).__name__}.")
    taken = {o.name: o for o in method_row(method).options} | _ALWAYS
    for name, value in options.items():
        if name in ("cancel", "progress"):
            continue
        if name not in taken:
            raise SpecError(f"{method} takes no option {name!r}; its options: {', '.join(taken)}.")
        if isinstance(value, bool) or not isinstance(value, _kinds(taken[name])):
            kinds = " or ".join(sorted({k.__name__.replace("NoneType", "None") for k in _kinds(taken[name])}))
            raise SpecError(f"The {method} option {name} is {kinds}, not {value!r}.")
        if name == "sign" and value is not None and value not in SIGNS:
            raise SpecError(f"The sign is one of {', '.join(SIGNS)}, not {value!r}.")


def with_baseline(model: LoadedModel | nn.Module, x: torch.Tensor, options: dict | None):
    """(options with "baseline" as a tensor, the Baseline made or None): a baseline given by name ("black",
    "blur", a file; with "blur_sigma" and "baseline_seed"; "zero" when none is given) is made for x and the
    model's preprocessing."""
    opts = dict(options or {})
    name, sigma, seed = opts.pop("baseline", "zero"), opts.pop("blur_sigma", None), opts.pop("baseline_seed", None)
    if name is None or isinstance(name, torch.Tensor):
        if name is not None:
            opts["baseline"] = name
        return opts, None
    preprocess = model.preprocess if isinstance(model, LoadedModel) else None
    shape = model.input_shape if isinstance(model, LoadedModel) else None
    made = make_baseline(name, x, preprocess, sigma, seed, shape)
    opts["baseline"] = made.tensor
    return opts, made


def _detects(model: LoadedModel | nn.Module, x: torch.Tensor) -> bool:
    """A loaded model its loader or layer tree calls a detector; a bare module that answers x with boxes."""
    if isinstance(model, LoadedModel):
        return detects(model)
    if not isinstance(model, nn.Module) or not isinstance(x, torch.Tensor):
        return False  # the method's own checks say what is wrong
    with torch.no_grad():
        return is_detection_output(model(x.detach().to(_device(model))))


def attribute(model: LoadedModel | nn.Module, x: torch.Tensor, method: str, target=None,
              layer: str | None = None, options: dict | None = None) -> Attribution:
    """One entry point for the CLI and the app: `method` is one of METHODS. For ig and occlusion,
    options["baseline"] may name a baseline (inspector.core.baselines); its details join the map's.
    options["sign"] (records.signs; None: the method's default) is how the map is drawn and scored."""
    check_options(method, options)
    options = dict(options) if options is not None else None
    sign = options.pop("sign", None) if options else None
    found = _attribute_with_baseline(model, x, method, target, layer, options or None)
    return dataclasses.replace(found, sign=sign or found.shown_sign)


def _attribute_with_baseline(model, x, method, target, layer, options) -> Attribution:
    row = method_row(method)
    if not row.detectors and _detects(model, x):
        boxes = ", ".join(m.name for m in METHODS.values() if m.detectors)
        raise SpecError(f"{method} does not explain detections yet; for a box use {boxes}.")
    if isinstance((options or {}).get("max_memory"), str):
        options = dict(options, max_memory=parse_memory(options["max_memory"]))
    if takes_baseline(method, (options or {}).get("of", "saliency")):
        options, made = with_baseline(model, x, options)
        found = _attribute(model, x, method, target, layer, options)
        if made is None:
            return found
        kept = tuple(d for d in found.details if d[0] != "baseline")
        return dataclasses.replace(found, details=kept + made.details() + (("baseline is", made.text),),
                                   baseline=made.tensor[0].detach().cpu().numpy())
    return _attribute(model, x, method, target, layer, options)


def _attribute(model, x, method, target, layer, options) -> Attribution:
    """The method's own function (the table's `run`, imported when first used) makes the map."""
    module_name, _, function = method_row(method).run.partition(":")
    return getattr(importlib.import_module(module_name), function)(model, x, target, layer, dict(options or {}))


# The methods' entries, as the method table names them: (model, x, target, layer, options) -> Attribution.
def saliency_map(model, x, target, layer, options) -> Attribution:
    grad, result = _saliency(model, x, target)
    return Attribution("saliency", grad, result.target, result.target_index, warnings=tuple(result.warnings),
                       **boxes_of(result))


def gradcam_map(model, x, target, layer, options) -> Attribution:
    return gradcam(model, x, target, layer)


def guided_map(model, x, target, layer, options) -> Attribution:
    return guided_backprop(model, x, target)


def guided_gradcam_map(model, x, target, layer, options) -> Attribution:
    return guided_gradcam(model, x, target, layer)


def rollout_map(model, x, target, layer, options) -> Attribution:
    return attention_rollout(model, x)


def eigencam_map(model, x, target, layer, options) -> Attribution:
    return eigencam(model, x, layer)


def drise_map(model, x, target, layer, options) -> Attribution:
    own = {k: v for k, v in options.items() if k not in _ALWAYS}  # a baseline is for the metrics
    return drise(model, x, target, **own)


def ig_map(model, x, target, layer, options) -> Attribution:
    return integrated_gradients(model, x, target, **options)


def smoothgrad_map(model, x, target, layer, options) -> Attribution:
    return smoothgrad(model, x, target, **options)


def occlusion_map(model, x, target, layer, options) -> Attribution:
    return occlusion(model, x, target, **options)
