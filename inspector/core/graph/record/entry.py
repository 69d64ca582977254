"""`record_graph`: the graph of one forward of a model on an input (see `recorder` for how, `model` for what)."""

from __future__ import annotations

import threading
from typing import Iterable

import torch
from torch import nn

from ...common.arguments import need_instance, need_texts
from ...common.errors import InputError, InspectorError, RunError, SpecError, first_line
from ...sources.loaded import LoadedModel
from .nodes import Graph
from .recorder import Recorder


def record_graph(model: LoadedModel | nn.Module, x: torch.Tensor, *, leaves: str | Iterable[str] | None = None,
                 cancel: threading.Event | None = None) -> Graph:
    """Run one forward of `model` on `x` (a copy on the model's device, without autograd) and return its graph:
    leaf module calls, the torch functions between them, the model's input and output as nodes; the tensors
    between them as edges; non-leaf module calls as groups (`Graph.closed` collapses them).

    `leaves`: module paths (a list, or text `layer1,layer2.0`) recorded as one node each, their insides left
    out, as a module without submodules is. A TorchScript program is one node (its insides take no hooks).
    `cancel`, when set, stops the recording at the next module call (RunCancelled). The model runs in the mode
    it is in (one in training mode updates its BatchNorm statistics, as any forward does).
    Whatever the model raises is a RunError of one line; the model keeps exactly the hooks it had."""
    module = model.module if isinstance(model, LoadedModel) else model
    need_instance(module, nn.Module, "model", "a torch.nn.Module or a loaded model")
    need_instance(x, torch.Tensor, "x", "a torch.Tensor")
    need_instance(cancel, (threading.Event, type(None)), "record_graph(): cancel", "a threading.Event or None")
    if x.numel() == 0:
        raise InputError(f"The input holds no values (shape {tuple(x.shape)}).")
    chosen = frozenset(p for p in need_texts(leaves, "record_graph(): leaves", "layer1,layer2.0") if p) \
        if leaves is not None else frozenset()
    unknown = sorted(chosen - {path for path, _ in module.named_modules()})
    if unknown:
        raise SpecError(f"No module named {', '.join(map(repr, unknown))} in this model (leaves name module paths).")
    device = next((p.device for p in module.parameters()), x.device)
    x = x.detach().to(device, copy=True)  # the model may change its input in place; the caller's stays intact
    recorder = Recorder(chosen, cancel)
    whole = isinstance(module, torch.jit.ScriptModule) or not any(True for _ in module.children())
    try:
        with torch.no_grad():
            recorder.forward(module, x, whole)
    except InspectorError:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever the model raises is said in one line
        raise RunError(f"The forward could not be recorded: the model raised {type(exc).__name__}: "
                       f"{first_line(exc)}") from exc
    finally:
        recorder.detach()
    return recorded(recorder, module)


def recorded(recorder: Recorder, module: nn.Module) -> Graph:
    """The graph `recorder` recorded of a forward of `module` (after `finish`)."""
    notes = list(recorder.notes)
    if isinstance(module, torch.jit.ScriptModule):
        notes.insert(0, "TorchScript runs compiled and takes no hooks: the model is one node.")
    return Graph(tuple(recorder.nodes), tuple(recorder.edges), recorder.groups(),
                 tuple(recorder.data_dependence), tuple(notes))
