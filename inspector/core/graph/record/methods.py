"""Groups for the functions a module's other methods run: a detector's post-processing (`transform.postprocess`,
SSD's and RetinaNet's `postprocess_detections`, per class and per box) is hundreds of functions called from
the model's own forward, which no module hook brackets: at the top of the graph they were hundreds of nodes
(ssd300_vgg16: 1065 drawn closed; 12 with these groups).

Where a function runs is read from the Python stack, up to the module call it lies in (`Module._call_impl`): the
outermost frame of a method other than `forward` whose `self` is one of the model's modules. Consecutive
children of a group that ran in the same call of the same method (the same frame) and are all functions become
one group, `path.method(...)`; a method that calls modules is left as it is, so that module groups stay what
the tree says (timm's `forward_features` calls the blocks: no group for it).
"""

from __future__ import annotations

from dataclasses import replace

from torch import nn

from ...common.keys import LayerCall
from .nodes import Node

#: Code objects of the frames that call a module (its hooks and its forward run under them).
_CALLS = frozenset({nn.Module._call_impl.__code__, nn.Module._wrapped_call_impl.__code__})

#: (id of the method's frame, the module's path, the method's name)
Context = tuple[int, str, str]


def method_context(frame, paths: dict[int, str]) -> tuple[Context | None, object]:
    """The outermost method other than `forward` of one of the model's modules (`paths`: id(module) -> path) that
    `frame` runs in, up to the module call it lies in (None when it runs in a `forward` itself), and that method's
    frame: the caller keeps the last one alive, so that the method's next call has another frame (another id)."""
    found, held = None, None
    while frame is not None and frame.f_code not in _CALLS:
        code = frame.f_code
        if code.co_argcount and code.co_varnames[0] == "self" and code.co_name != "forward" and \
                not code.co_name.startswith("__"):
            owner = frame.f_locals.get("self")
            path = paths.get(id(owner))
            if path is not None and callable(getattr(type(owner), code.co_name, None)):
                found, held = (id(frame), path, code.co_name), frame
        frame = frame.f_back
    return found, held


def caller_of_module(frame):
    """The frame that called the module whose hook runs in `frame` (the first one past `_call_impl`)."""
    while frame is not None and frame.f_code not in _CALLS:
        frame = frame.f_back
    while frame is not None and frame.f_code in _CALLS:
        frame = frame.f_back
    return frame


def wrap_method_runs(nodes: list[Node], children: dict[str, list[str]], groups: dict[str, tuple],
                     contexts: dict[str, Context | None], types: dict[str, str]) -> list[Node]:
    """Make a group of each run of two or more functions that one call of a method ran, in each group's children
    (`children`: group id -> child ids; `groups`: id -> (path, type, call, parent, method), in order, added to),
    unless that call of the method called a module too. Returns `nodes` with those functions' group changed."""
    kinds = {n.id: n.kind for n in nodes}
    busy = {c for ident, c in contexts.items() if c is not None and kinds.get(ident) != "function"}  # called modules
    moved: dict[str, str] = {}
    counts: dict[str, int] = {}
    for parent in list(children):
        kept: list[str] = []
        run: list[str] = []
        for child in [*children[parent], None]:  # None: the end
            context = contexts.get(child) if child is not None else None
            context = None if context in busy else context
            if run and (context is None or context != contexts[run[0]] or kinds.get(child) != "function"):
                kept += _wrapped(run, parent, contexts[run[0]], children, groups, types, counts, moved)
                run = []
            if child is None:
                break
            if context is not None and kinds.get(child) == "function":
                run.append(child)
            else:
                kept.append(child)
        children[parent] = kept
    return [replace(n, group=moved[n.id]) if n.id in moved else n for n in nodes]


def _wrapped(run, parent, context, children, groups, types, counts, moved) -> list[str]:
    if len(run) < 2:
        return run
    _, path, method = context
    base = f"{path}.{method}(...)" if path else f"{method}(...)"
    call = counts.get(base, 0)
    counts[base] = call + 1
    ident = str(LayerCall(base, call))
    groups[ident] = (path, types[path], call, parent, method)
    children[ident] = list(run)
    moved.update((child, ident) for child in run)
    return [ident]
