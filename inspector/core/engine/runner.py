"""A run: model + input + layers + sites + edits + target -> RunResult.

Backward is `torch.autograd.grad` on exactly the gradients that were asked for, so
autograd computes only what those need: no parameter gradients unless `params` is
asked, and nothing below the earliest requested site unless the input gradient is.
The user's `.grad` fields are never touched.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Sequence

import torch
from torch import nn
from torch.autograd.graph import get_gradient_edge

from ..common.arguments import need_function, need_instance
from ..attention.site import check_heads
from ..detection.outputs import detection_arrays, detections_of, is_detection_output
from ..detection.targets import box_objective, check_box_rank
from ..detection.thresholds import score_threshold
from ..edits import Edit
from ..common.errors import InputError, InspectorError, RunError, SpecError
from ..common.keys import GRAD_SITES, MODULE_SITES, Key
from ..target.objective import objective, primary_output
from ..records.labels import label_name
from ..runspec import RunSpec
from ..sources.sharing import Sharing
from .hookset import HookSet, to_numpy
from .result import Prediction, RunResult
from .zero_head import zero_head_warning

__all__ = ["RunSpec", "Sharing", "predictions", "run"]


def _check_edits(edits: Sequence[Edit], modules: dict[str, nn.Module], params: dict[str, nn.Parameter]) -> None:
    for edit in edits:
        layer, site = edit.key.layer, edit.key.site
        if site == "grad":
            if layer not in params:
                raise SpecError(f"Edit {edit}: no parameter {layer!r}. Parameters look like fc1.weight, fc1.bias.")
        elif layer not in modules:
            raise SpecError(f"Edit {edit}: no layer named {layer!r}. Use `network-inspector layers` to list them.")
        elif site not in MODULE_SITES:
            raise SpecError(f"Edit {edit}: site must be one of {', '.join(MODULE_SITES)} or PARAM:grad.")
        elif (site == "attention") != (edit.op == "zero_heads"):
            raise SpecError(f"Edit {edit}: at the attention site the one edit is zero_heads([h, ...]) (the "
                            f"probabilities are captured beside the module, which does not use them), and "
                            f"zero_heads belongs at LAYER:attention.")
        elif site == "attention":
            check_heads(modules[layer], layer, dict(edit.args)["heads"])


def predictions(logits: torch.Tensor, labels: Sequence[str] | None, k: int = 5) -> list[Prediction]:
    """Top-k of the first batch item, with softmax probabilities and labels when known. For a
    (batch, classes, H, W) segmentation: the classes that take most pixels, `probability` the share
    of pixels whose top class it is and `logit` its mean logit."""
    if logits.ndim == 4 and logits.shape[1] >= 2:
        return _segment_predictions(logits[0].detach().float(), labels, k)
    if logits.ndim != 2 or logits.shape[1] < 2:
        return []
    row = logits[0].detach().float()
    probs = torch.softmax(row, dim=0)
    top = torch.topk(probs, min(k, row.numel()))
    out = []
    for p, i in zip(top.values.tolist(), top.indices.tolist()):
        out.append(Prediction(i, label_name(i, labels), p, float(row[i])))
    return out


def _segment_predictions(logits: torch.Tensor, labels: Sequence[str] | None, k: int) -> list[Prediction]:
    winners = logits.argmax(dim=0).reshape(-1)
    share = torch.bincount(winners, minlength=logits.shape[0]).float() / winners.numel()
    mean = logits.mean(dim=(1, 2))
    top = torch.topk(share, min(k, share.numel()))
    return [Prediction(i, label_name(i, labels), p, float(mean[i]))
            for p, i in zip(top.values.tolist(), top.indices.tolist()) if p > 0]


def run(
    model: nn.Module,
    inputs: torch.Tensor,
    spec: RunSpec,
    labels: Sequence[str] | None = None,
    cancel: threading.Event | None = None,
    sharing: Sharing | None = None,
    phase: Callable[[str], None] | None = None,
) -> RunResult:
    """Forward (and backward when a gradient is asked for) with hooks on the chosen layers.

    The model keeps exactly the hooks it had before, whatever happens. `phase`, when given, is
    told "forward" and "backward" as each pass starts (the app's progress indicator).

    `sharing`: what earlier runs of this model have shown (see inspector.core.sources.sharing). With
    it, a CPU capture shares memory with the tensor the model made instead of being copied,
    once a run has shown that the model never changes that tensor in place later. Every
    shared capture's version counter is checked after the run; should the model change one
    after all (in-place ops that depend on the data), the run is done once more with copies.
    Without it (None) every capture is a copy.
    """
    need_instance(model, nn.Module, "model", "a torch.nn.Module")
    need_instance(inputs, torch.Tensor, "inputs", "a torch.Tensor")
    need_instance(spec, RunSpec, "spec", "a RunSpec (RunSpec.make(...))")
    for label in need_instance(labels, (list, tuple, type(None)), "run(): labels",
                               "a list of class names (text) or None") or ():
        need_instance(label, str, "run(): labels", "a list of class names (text) or None")
    need_instance(cancel, (threading.Event, type(None)), "run(): cancel", "a threading.Event or None")
    need_instance(sharing, (Sharing, type(None)), "run(): sharing", "a Sharing or None")
    need_function(phase, "run(): phase")
    if inputs.numel() == 0:
        raise InputError(f"The input holds no values (shape {tuple(inputs.shape)}).")
    check_box_rank(model, spec.target)
    state = Sharing() if sharing is None else sharing
    safe = state.safe()
    result, seen, mutated = _run_once(model, inputs, spec, labels, cancel, safe, phase)
    late = state.learn(seen, mutated, safe)
    if late:
        result, _, _ = _run_once(model, inputs, spec, labels, cancel, state.safe(), phase)
        result.log("note", f"Ran twice: the model changed {len(late)} captured tensor(s) in place this time "
                           f"(e.g. {sorted(late)[0]}); those are copied from now on.")
    return result


def _run_once(model, inputs, spec, labels, cancel, safe: frozenset[str],
              phase=None) -> tuple[RunResult, set[str], set[str]]:
    started = time.perf_counter()
    tell = phase or (lambda _name: None)
    modules = dict(model.named_modules())
    params = dict(model.named_parameters())
    missing = [p for p in spec.layers if p not in modules and not ("params" in spec.sites and p in params)]
    if missing:
        raise SpecError(f"No layer named {', '.join(map(repr, missing))}. Use `network-inspector layers` to list them.")
    _check_edits([e for e in spec.edits if e.enabled], modules, params)  # an edit switched off stops nothing
    device = next((p.device for p in model.parameters()), inputs.device)
    result = RunResult(target=str(spec.target), device=str(device), edits=[str(e) for e in spec.edits if e.enabled])

    module_sites = spec.sites & set(MODULE_SITES)
    captured = {path: set(module_sites) for path in spec.layers if path and path in modules}
    param_keys = _param_keys(spec, modules, params) if "params" in spec.sites else []
    wants_grad = bool(spec.input_grad or param_keys or module_sites & GRAD_SITES)
    x = inputs.detach().to(device, copy=True)  # the model may change its input in place; ours stays intact
    if wants_grad and x.is_floating_point():
        x.requires_grad_(True)
    result.input = to_numpy(x)

    hooks = HookSet(modules, captured, list(spec.edits), result, cancel,
                    keep_arrays=spec.keep == "full", with_stats=spec.stats_in_run, safe=safe,
                    defer_stats=spec.defers_stats)
    with hooks:
        tell("forward")
        t0 = time.perf_counter()
        with torch.set_grad_enabled(wants_grad):
            try:
                output = model(x)
            except InspectorError:
                raise
            except Exception as exc:
                raise RunError(f"The model raised {type(exc).__name__}: {exc}") from exc
        _warn_nonfinite(result, "input", x)
        if is_detection_output(output):
            obj, resolved = _read_detections(result, model, output, spec, labels)
        else:
            obj, resolved = _read_logits(result, model, output, spec, labels, tuple(x.shape[-2:]))
        t1 = time.perf_counter()
        result.timings["forward_s"] = t1 - t0
        for path in captured:
            if hooks.calls.get(path, 0) == 0:
                result.log("warning", f"{path} was not called during the forward pass; nothing captured there.")
        result.target = str(resolved)
        result.objective = float(obj.detach())
        hooks.check_cancel()
        wanted = list(hooks.grad_edges)
        wanted += [get_gradient_edge(p) for _, p in param_keys]
        if spec.input_grad:
            wanted.append(get_gradient_edge(x) if x.requires_grad else None)
        wanted = [w for w in wanted if w is not None]
        if wanted and obj.requires_grad:
            tell("backward")
            try:
                grads = torch.autograd.grad(obj, wanted, allow_unused=True)
            except InspectorError:
                raise
            except RuntimeError as exc:
                raise RunError(f"Backward failed: {exc}") from exc
            _store_leaf_grads(hooks, result, spec, param_keys, grads, x)
            said = zero_head_warning(model)
            if said is not None:
                result.log("warning", said)
        elif wanted:
            result.log("warning", f"The objective ({spec.target}) does not depend on anything that needs a gradient.")
        hooks.finish_stats()
        result.timings["backward_s"] = time.perf_counter() - t1
    for name in hooks.expected_grads:
        if name not in hooks.fired:
            result.log("warning", f"No gradient reached {name}: the objective does not depend on it through this path.")
    _report_edits(result, spec.edits, hooks)
    seen, mutated = hooks.tracked_keys(), hooks.mutated_keys()
    result.timings["total_s"] = time.perf_counter() - started
    return result, seen, mutated


def _read_logits(result: RunResult, model: nn.Module, output, spec: RunSpec, labels,
                 input_hw) -> tuple[torch.Tensor, object]:
    """A classifier's or a segmenter's output: its predictions and the objective."""
    logits = primary_output(output)
    _warn_nonfinite(result, "output", logits)
    result.output = to_numpy(logits)
    result.predictions = _prompt_predictions(model, logits, spec.target) if hasattr(model, "prompt_logits") \
        else predictions(logits, labels)
    if logits.ndim == 4 and logits.shape[1] > 1:  # a segmentation: its class map, for the picture
        result.classes = logits[0].detach().argmax(dim=0).to(torch.int16).cpu().numpy()
    obj, result.target_index, resolved = objective(logits, spec.target, input_hw, model)
    return obj, resolved


def _prompt_predictions(model: nn.Module, embeds: torch.Tensor, target) -> list[Prediction]:
    """An image-text model's (CLIP, SigLIP): the target's prompts by their softmax probability among them (its
    zero-shot answer); none without prompts (an embedding has no classes)."""
    if target.kind != "text" or embeds.ndim != 2:
        return []
    with torch.no_grad():
        return predictions(model.prompt_logits(embeds.detach(), target.prompts), target.prompts)


def _read_detections(result: RunResult, model: nn.Module, output, spec: RunSpec, labels) -> tuple[torch.Tensor, object]:
    """A detector's output: its detections (best first) and the score of the target's box as the objective."""
    _warn_nonfinite(result, "output", output[0]["scores"])
    result.detections = detections_of(output, labels)
    arrays = detection_arrays(output)
    result.output = arrays.pop("output")
    result.extras = arrays
    threshold = score_threshold(model)
    obj, result.target_index, resolved, result.target_detection = box_objective(output, spec.target, labels,
                                                                                threshold)
    if resolved.kind == "auto":
        shown = f" {threshold:g}" if threshold is not None else ""
        result.log("warning", f"The model detected nothing above its score threshold{shown}: the objective is 0 "
                              f"and every gradient 0.")
    return obj, resolved


def _param_keys(spec: RunSpec, modules: dict[str, nn.Module], params: dict[str, nn.Parameter]):
    """(path, parameter) for the `params` site: the parameters each selected module owns itself, and
    parameters named in `spec.layers` by their own path (those no selected module owns)."""
    found: dict[str, nn.Parameter] = {}
    for path in spec.layers:
        if path in modules:
            for name, param in modules[path].named_parameters(recurse=False):
                found.setdefault(f"{path}.{name}" if path else name, param)
        else:
            found.setdefault(path, params[path])
    return [(name, p) for name, p in found.items() if p.requires_grad]


def _report_edits(result: RunResult, edits: Sequence[Edit], hooks: HookSet) -> None:
    """`result.edits` lists the edits that were applied; those enabled but not applied are one warning."""
    for edit in edits:
        if edit.enabled and edit.key.site == "attention" and hooks.calls.get(edit.key.layer):
            hooks.applied.add(id(edit))  # zero_heads changes the module's computation each time it runs
    result.edits = [str(e) for e in edits if e.enabled and id(e) in hooks.applied]
    missed = [str(e) for e in edits if e.enabled and id(e) not in hooks.applied]
    if missed:
        shown = ", ".join(missed[:4]) + (f" and {len(missed) - 4} more" if len(missed) > 4 else "")
        result.log("warning", f"{len(missed)} edit(s) not applied: nothing they name was reached in this run "
                              f"(a parameter gradient is edited only where params are captured): {shown}.")


def _warn_nonfinite(result: RunResult, what: str, tensor: torch.Tensor) -> None:
    """A warning when the model's input or output holds NaN or Inf (the numbers after it mean little)."""
    said = nonfinite_warning(f"The model's {what}", tensor, what == "input")
    if said is not None:
        result.log("warning", said)


def nonfinite_warning(what: str, tensor: torch.Tensor, feeds: bool = True) -> str | None:
    """What to say when `tensor` (the model's input or output, an attribution's baseline) holds NaN or Inf, else
    None; `feeds`: everything computed from it may be NaN."""
    if not (tensor.is_floating_point() or tensor.is_complex()):
        return None
    t = tensor.detach()
    nan = int(t.isnan().sum())
    inf = int(t.isinf().sum())
    if not (nan or inf):
        return None
    parts = [f"{n} {word}" for n, word in ((nan, "NaN"), (inf, "Inf")) if n]
    return (f"{what} holds {' and '.join(parts)} of {t.numel()} values"
            + ("; everything computed from it may be NaN." if feeds else "."))


def _store_leaf_grads(hooks: HookSet, result: RunResult, spec: RunSpec, param_keys, grads, x) -> None:
    """Parameter and input gradients come back from autograd.grad; parameter edits apply here."""
    offset = len(hooks.grad_edges)
    for (name, param), grad in zip(param_keys, grads[offset:]):
        key = Key(name, "grad")
        if grad is None:
            result.log("warning", f"No gradient reached {key}.")
            continue
        for edit in spec.edits:
            if edit.enabled and edit.matches(key):
                grad = edit.apply(grad)
                hooks.applied.add(id(edit))
        hooks.store(key, grad)
    if spec.input_grad:
        grad = grads[-1] if x.requires_grad else None
        if grad is None:
            result.log("warning", "No gradient reached the model input.")
        else:
            result.input_grad = to_numpy(grad)
