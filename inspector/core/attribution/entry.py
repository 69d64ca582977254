"""The one way in to an attribution map: `attribute` checks a method's options against the method table
(records.methods), makes a baseline named by the caller, runs the row's own function (its `run`, imported
when first used) and says the sign the map is drawn and scored with (records.signs).
"""

from __future__ import annotations

import dataclasses
import importlib

import torch
from torch import nn

from ..detection.outputs import is_detection_output
from ..detection.targets import check_box_rank
from ..common.errors import SpecError
from ..records.methods import METHODS, SCORES_BASELINE, SIGN_HELP, Method, Option
from ..records.signs import SIGNS
from ..engine.runner import nonfinite_warning
from ..sources.loaded import LoadedModel, detects
from .passes.batching import parse_memory
from .passes.raised import model_errors
from ..target.objective import parse_target
from ..target.prompts import check_prompts
from .record import Attribution, _device, _unwrap
from .scores.baselines import make_baseline

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
    if option.auto is None:
        return _KINDS[option.kind]
    return _KINDS[option.kind] + (type(option.auto_value),)  # None, or a word ("auto")


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
            words = {k.__name__.replace("NoneType", "None") for k in _kinds(taken[name])}
            if isinstance(taken[name].auto_value, str):  # steps: a number or the word "auto"
                words = (words - {"str"}) | {repr(taken[name].auto_value)}
            kinds = " or ".join(sorted(words))
            raise SpecError(f"The {method} option {name} is {kinds}, not {value!r}.")
        if isinstance(value, str) and taken[name].auto_value is not None and value != taken[name].auto_value \
                and taken[name].kind not in ("choice", "text", "baseline", "memory"):
            raise SpecError(f"The {method} option {name} is a number or {taken[name].auto_value!r}, not {value!r}.")
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


def is_detector(model: LoadedModel | nn.Module, x: torch.Tensor) -> bool:
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
    options["baseline"] may name a baseline (inspector.core.attribution.scores.baselines); its details join the map's.
    options["sign"] (records.signs; None: the method's default) is how the map is drawn and scored."""
    check_options(method, options)
    if isinstance(layer, str) and not layer.strip():
        raise SpecError("The layer is empty: name one (conv1, layer4.2.conv3), or give none for the method's own.")
    if isinstance(x, torch.Tensor) and x.is_complex():
        raise SpecError(f"The input is complex ({str(x.dtype).removeprefix('torch.')}): a model takes real numbers.")
    options = dict(options) if options is not None else None
    sign = options.pop("sign", None) if options else None
    prompts = check_prompts(_unwrap(model)[0], parse_target(target))  # a text: target's, before the model runs
    found = _attribute_with_baseline(model, x, method, target, layer, options or None)
    said = [nonfinite_warning("The model's input", x)]  # the engine's words, said once whichever method ran
    if found.baseline is not None:
        said.append(nonfinite_warning("The baseline", torch.as_tensor(found.baseline)))
    new = tuple(w for w in said if w is not None and w not in found.warnings)
    return dataclasses.replace(found, sign=sign or found.shown_sign, warnings=found.warnings + new,
                               notes=found.notes + prompts)


def _attribute_with_baseline(model, x, method, target, layer, options) -> Attribution:
    row = method_row(method)
    if isinstance(model, (LoadedModel, nn.Module)):
        check_box_rank(model.module if isinstance(model, LoadedModel) else model, parse_target(target))
    if not row.detectors and is_detector(model, x):
        from .chefer_detr import box_methods

        raise SpecError(f"{method} does not explain detections yet; for a box use {box_methods(_unwrap(model)[0])}.")
    if (options or {}).get("max_memory") is not None:  # text or bytes, checked by one rule
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
    row = method_row(method)
    module_name, _, function = row.run.partition(":")
    make = getattr(importlib.import_module(module_name), function)
    with model_errors(row.name):  # one line for a model that fails in any pass of any method
        return make(model, x, target, layer, dict(options or {}))
