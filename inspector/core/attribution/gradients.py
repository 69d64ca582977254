"""Maps made by one engine run with hooks: saliency (the input gradient's magnitude), guided backprop (the
input gradient with only positive gradients through each activation) and guided Grad-CAM (their product).
Maps are for the first batch item and the objective the target picks (top1 for classifiers); every hook is
the engine's, so the model keeps exactly the hooks it had.
"""

from __future__ import annotations

import sys
import weakref
from collections import Counter

import numpy as np
import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from ..edits.guided import APPROXIMATED_TYPES, guided_edits, split_guided
from ..common.errors import RunError
from ..target.objective import Target, parse_target
from ..engine.runner import RunSpec, run
from ..engine.result import RunResult
from ..sources.loaded import LoadedModel
from .cams.gradcam import gradcam
from .record import Attribution, _unwrap, box_found, boxes_of

#: The activation modules the guided rule reaches (inspector.core.edits.guided), as torch classes.
APPROXIMATED = tuple(getattr(nn, name) for name in APPROXIMATED_TYPES)


#: Functions that, called outside those modules, no module hook can reach.
_RECTIFIERS = frozenset({"relu", "relu_", "relu6", "silu", "gelu", "hardswish", "leaky_relu",
                         "leaky_relu_", "elu", "elu_", "mish"})


def _first_grad(result: RunResult) -> np.ndarray:
    if result.input_grad is None:
        raise RunError("No gradient reached the model input: " + ("; ".join(result.warnings) or "unknown reason."))
    return result.input_grad[0]


def _saliency(model, x: torch.Tensor, target) -> tuple[np.ndarray, RunResult]:
    module, labels = _unwrap(model)
    spec = RunSpec((), frozenset(), (), parse_target(target), input_grad=True, stats=False)
    result = run(module, x, spec, labels)
    box_found(result.detections, result.target_detection)
    grad = np.abs(_first_grad(result))
    return (grad.max(axis=0) if grad.ndim >= 2 else grad), result


def saliency(model: LoadedModel | nn.Module, x: torch.Tensor, target=None) -> np.ndarray:
    """Input-gradient magnitude: max over channels of |d objective / d input|, (H, W) for images."""
    return _saliency(model, x, target)[0]


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
    box_found(result.detections, result.target_detection)
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
    elif parse_target(guided.target).kind == "seg":  # a segmentation's class map (its box too), as resolved
        same = guided.target
    cam = gradcam(model, x, same, layer)
    return Attribution("guided-gradcam", guided.map * cam.map[None], guided.target, guided.target_index,
                       cam.layer, cam.cam, guided.covered, guided.approximated, guided.unreached,
                       guided.warnings + cam.warnings, guided.approximated_types, notes=cam.notes,
                       detections=guided.detections, target_detection=guided.target_detection)


# The methods' entries, as the method table names them: (model, x, target, layer, options) -> Attribution.
def saliency_map(model, x, target, layer, options) -> Attribution:
    grad, result = _saliency(model, x, target)
    return Attribution("saliency", grad, result.target, result.target_index, warnings=tuple(result.warnings),
                       **boxes_of(result))


def guided_map(model, x, target, layer, options) -> Attribution:
    return guided_backprop(model, x, target)


def guided_gradcam_map(model, x, target, layer, options) -> Attribution:
    return guided_gradcam(model, x, target, layer)
