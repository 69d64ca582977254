"""One recorded run with values on: the recorder of `record_graph` run again, on autograd, with a `Watch` told every
tensor a node makes, the engine's edit hooks (`HookSet`, as `engine.run` installs them) in place, and the backward
of the target. The recording must equal the graph it is for (the same ids): a forward that went another way (a
detector's data-dependent control flow on another input, another model) is refused, not matched by guesswork.

Edits. The engine's `HookSet` hooks the edited modules before the recorder does, so the recorder sees what the
edit hooks hand on (a module's edited output is what later nodes read). `EditBridge` brackets those hooks: the
recorder ignores the torch calls an edit makes (`scale` is no `mul` node), and the tensor an edit returns stands
for the one it replaced (made by the same node; an edited output's values are that node's).
"""

from __future__ import annotations

import threading
from contextlib import ExitStack
from dataclasses import dataclass

import torch
from torch import nn

from ...detection.outputs import is_detection_output
from ...detection.targets import box_objective
from ...detection.thresholds import score_threshold
from ...edits import Edit
from ...engine.hookset import HookSet
from ...engine.result import RunResult
from ...engine.runner import _check_edits, _report_edits
from ...common.errors import InspectorError, MismatchError, RunError, first_line
from ...target.objective import Target, objective, primary_output
from ..record.entry import recorded
from ..record.nodes import Graph
from ..record.recorder import Recorder, tensors_in
from .watch import EDITED_PATH, Watch


class EditBridge:
    """Hooks around the engine's edit hooks on `modules` (registered after them, before the recorder's)."""

    def __init__(self, recorder: Recorder, modules: list[nn.Module]) -> None:
        self.recorder = recorder
        self.handles = []
        self._given: list[list[torch.Tensor]] = []
        for module in modules:
            self.handles.append(module.register_forward_pre_hook(self._before, prepend=True))
            self.handles.append(module.register_forward_pre_hook(self._after_input))
            self.handles.append(module.register_forward_hook(self._before, prepend=True))
            self.handles.append(module.register_forward_hook(self._after_output))

    def _before(self, _module, *given):
        self.recorder._quiet += 1
        self._given.append(tensors_in(given[-1] if len(given) == 2 else given[0]))

    def _after(self, handed, watch: bool) -> None:
        self.recorder._quiet -= 1
        for old, new in zip(self._given.pop(), tensors_in(handed)):
            self.recorder.fold(new, old, watch)

    def _after_input(self, _module, args):
        self._after(args, False)

    def _after_output(self, _module, _args, output):
        self._after(output, True)

    def remove(self) -> None:
        while self.handles:
            self.handles.pop().remove()


@dataclass
class Ran:
    """What one run left: the watch (by the recorder's ids while it ran), those ids' ids in the graph, the target
    resolved, whether a backward ran, and what to say."""

    watch: Watch
    renamed: dict[str, str]
    target: Target
    gradients: bool
    notes: list[str]


def leaves_of(module: nn.Module, graph: Graph) -> frozenset[str]:
    """The paths recorded as one node though they hold submodules (`record_graph(leaves=...)`)."""
    modules = dict(module.named_modules())
    return frozenset(n.path for n in graph.nodes if n.kind == "module" and n.path in modules
                     and any(True for _ in modules[n.path].children()))


def _check_same(got: Graph, graph: Graph, edited: bool) -> None:
    if (got.nodes, got.edges, got.groups) == (graph.nodes, graph.edges, graph.groups):
        return
    for i, (a, b) in enumerate(zip(got.nodes, graph.nodes)):
        if a != b:
            where = f"node {i} is {a.id} ({a.op}) in this forward, {b.id} ({b.op}) in the graph"
            break
    else:
        where = (f"this forward has {len(got.nodes)} nodes and {len(got.edges)} edges, the graph "
                 f"{len(graph.nodes)} and {len(graph.edges)}")
    if edited:
        raise MismatchError(f"With these edits the forward is not the graph's ({where}): {EDITED_PATH}.")
    raise MismatchError(f"This forward is not the graph's ({where}): the model or the input differ from the ones "
                        f"it was recorded with, or the control flow depends on the data. Record the graph again.")


def _objective(module: nn.Module, output, target: Target, hw) -> tuple[torch.Tensor, Target]:
    """The engine's objective: a classifier's top class by default, a segmenter's most common class, a
    detector's best box."""
    if is_detection_output(output):
        obj, _, resolved, _ = box_objective(output, target, None, score_threshold(module))
        return obj, resolved
    obj, index, resolved = objective(primary_output(output), target, hw, module)
    if resolved.kind in ("auto", "top1") and index is not None:
        resolved = Target("index", index)  # the second run of a comparison backpropagates the same class
    return obj, resolved


def run(module: nn.Module, x: torch.Tensor, graph: Graph, watch: Watch, *, target: Target,
        edits: list[Edit] = (), cancel: threading.Event | None = None, backward: bool = True) -> Ran:
    """Run `module` on `x` recording `graph` again with `watch` told every tensor, edits applied, and (when
    `backward` and something needs a gradient) the backward of `target`."""
    edits = [e for e in edits if e.enabled]
    modules = dict(module.named_modules())
    _check_edits(edits, modules, dict(module.named_parameters()))
    device = next((p.device for p in module.parameters()), x.device)
    leaf = x.detach().to(device, copy=True)
    differentiable = backward and leaf.is_floating_point()
    leaf.requires_grad_(differentiable)
    params = [p for p in module.parameters() if p.requires_grad] if backward and not differentiable else []
    recorder = Recorder(leaves_of(module, graph), cancel)
    recorder.watch = watch
    result = RunResult(target=str(target), device=str(device), edits=[str(e) for e in edits])
    hooks = HookSet(modules, {}, list(edits), result, cancel, keep_arrays=False, with_stats=False)
    whole = isinstance(module, torch.jit.ScriptModule) or not any(True for _ in module.children())
    notes: list[str] = []
    gradients = False
    try:
        with ExitStack() as stack, torch.set_grad_enabled(differentiable or bool(params)):
            stack.enter_context(hooks)
            bridge = EditBridge(recorder, [modules[p] for p in sorted({e.key.layer for e in edits}) if p in modules])
            stack.callback(bridge.remove)
            stack.callback(recorder.detach)
            x_run = leaf.clone() if differentiable else leaf  # the model may change its input in place
            output = recorder.forward(module, x_run, whole)
            _check_same(recorded(recorder, module), graph, bool(edits))
            obj, target = _objective(module, output, target, tuple(x.shape[-2:]))
            if is_detection_output(output) and target.kind == "auto":
                notes.append("The model detected nothing above its score threshold: the objective is 0 and every "
                             "gradient 0.")
            wanted = [leaf] if differentiable else params
            if wanted and obj.requires_grad:
                torch.autograd.grad(obj, wanted, allow_unused=True)
                gradients = True
            elif backward:
                notes.append(f"No gradients: the objective ({target}) depends on nothing that has one.")
            hooks.check_cancel()
    except InspectorError:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever the model raises is said in one line
        raise RunError(f"The values could not be recorded: the model raised {type(exc).__name__}: "
                       f"{first_line(exc)}") from exc
    _report_edits(result, edits, hooks)
    notes += result.warnings
    return Ran(watch, dict(recorder.renamed), target, gradients, notes)
