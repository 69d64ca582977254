"""Live data on the graph: the values of one run at every node and edge of a recorded graph (`graph_values`), and
two runs compared node by node (`compare_edits`: edits on vs off; `compare_models`: two checkpoints).

    graph = record_graph(model, x)
    values = graph_values(model, x, graph)                # every node: mean |x|, L2, zeros, NaN, Inf, grad L2
    values.for_view(graph.closed())                       # per drawn node; a closed group: what it returns
    diff = compare_edits(model, x, graph, ["layer2.0.conv1:output=zero()"])
    diff.change["layer3.0.conv1"], diff.first_divergent   # relative L2 change, edited vs baseline

Memory of a comparison. The first run keeps a CPU copy of each node's output tensors (in their own dtype) while
they fit in `memory_bytes`; the second run compares each tensor with its copy as it is made and keeps only two
numbers. Tensors that did not fit are compared in further pairs of forward-only runs, each keeping the next ones
that fit: at most `memory_bytes` of copies (or one tensor, if larger) are held at any time, at the price of two
forwards per further round (`GraphComparison.rounds`). Both runs of a round start from one random seed, so
dropout and noise edits draw the same numbers in both.
"""

from __future__ import annotations

import threading
from typing import Iterable, Sequence

import torch
from torch import nn

from ...common.arguments import need_instance, need_list
from ...compare.arguments import check_threshold
from ...compare.diff import DEFAULT_THRESHOLD
from ...edits import Edit, parse_edit
from ...common.errors import InputError, SpecError
from ...target.objective import Target, parse_target
from ...sources.loaded import LoadedModel
from ..record.nodes import Graph
from .comparison import GraphComparison
from .numbers import GraphValues, NodeValues
from .run import Ran, run
from .watch import Watch, read_rows

__all__ = ["DEFAULT_MEMORY", "GraphComparison", "GraphValues", "NodeValues", "compare_edits", "compare_models",
           "compare_runs", "graph_values"]

#: The copies of the first run's tensors a comparison may hold at once (bytes).
DEFAULT_MEMORY = 1 << 30


def _module(model, what: str = "model") -> nn.Module:
    module = model.module if isinstance(model, LoadedModel) else model
    return need_instance(module, nn.Module, what, "a torch.nn.Module or a loaded model")


def _edits(edits: Iterable[Edit | str] | None) -> list[Edit]:
    if edits is None:
        return []
    if isinstance(edits, (str, Edit)):
        edits = [edits]
    out = []
    for e in need_list(edits, "edits", "layer1:output=scale(2)"):
        if not isinstance(e, (str, Edit)):
            raise SpecError(f"An edit is an Edit or text like layer1:output=scale(2), not {type(e).__name__}.")
        out.append(e if isinstance(e, Edit) else parse_edit(e))
    return out


def _check(x, graph, cancel) -> None:
    need_instance(x, torch.Tensor, "x", "a torch.Tensor")
    need_instance(graph, Graph, "graph", "the Graph record_graph(model, x) returned")
    need_instance(cancel, (threading.Event, type(None)), "cancel", "a threading.Event or None")
    if x.numel() == 0:
        raise InputError(f"The input holds no values (shape {tuple(x.shape)}).")


def _ids(graph: Graph, ran: Ran, keys) -> dict:
    """The recorder's keys while it ran -> the graph's (node id, index); keys of nodes it left out dropped."""
    ids = {n.id for n in graph.nodes}
    out = {}
    for node, index in keys:
        final = ran.renamed.get(node, node)
        if final in ids:
            out[(node, index)] = (final, index)
    return out


def _read(tensors: dict) -> dict:
    """Key -> the values of its (small) tensor, as numbers."""
    return read_rows(tensors)


def _values(graph: Graph, ran: Ran) -> GraphValues:
    watch = ran.watch
    rows, grads = read_rows(watch.rows), _read(watch.grad_sq)
    tensors = {}
    for key, final in _ids(graph, ran, rows).items():
        absolute, squares, nonzero, nan, inf = rows[key]
        count = watch.counts[key]
        grad = grads.get(key)
        tensors[final] = NodeValues(count, absolute, squares, count - int(nonzero) - int(nan) - int(inf), int(nan),
                                    int(inf), None if grad is None else grad[0])
    return GraphValues.of(graph, tensors, target=str(ran.target), gradients=ran.gradients, notes=tuple(ran.notes))


def graph_values(model: LoadedModel | nn.Module, x: torch.Tensor, graph: Graph, *,
                 target: str | int | Target | None = None, edits: Iterable[Edit | str] | None = None,
                 cancel: threading.Event | None = None) -> GraphValues:
    """The values of one forward and backward of `model` on `x` at every node and edge of `graph` (which
    `record_graph(model, x)` made; a forward that goes another way is refused: MismatchError).

    `target`: what the backward starts from, as the engine reads it (None: a classifier's top class, a
    segmenter's most common class, a detector's best box). `edits`: the engine's edits (`Edit`s or text
    `layer1:output=scale(2)`), applied by the engine's own hooks. `cancel`, when set, stops the run at the next
    module call or gradient (RunCancelled). The model keeps exactly the hooks it had."""
    module = _module(model)
    _check(x, graph, cancel)
    ran = run(module, x, graph, Watch(cancel=cancel), target=parse_target(target), edits=_edits(edits),
              cancel=cancel)
    return _values(graph, ran)


class _Seeded:
    """Both runs of a round draw the same random numbers (dropout, a noise edit); the caller's state is kept."""

    def __init__(self, module: nn.Module, seed: int) -> None:
        device = next((p.device for p in module.parameters()), torch.device("cpu"))
        self.devices = [device] if device.type == "cuda" else []
        self.seed = seed

    def __enter__(self):
        self._fork = torch.random.fork_rng(devices=self.devices)
        self._fork.__enter__()
        torch.manual_seed(self.seed)

    def __exit__(self, *exc):
        return self._fork.__exit__(*exc)


def compare_runs(first: LoadedModel | nn.Module, second: LoadedModel | nn.Module, x: torch.Tensor, graph: Graph, *,
                 first_edits: Iterable[Edit | str] | None = None, second_edits: Iterable[Edit | str] | None = None,
                 target: str | int | Target | None = None, threshold: float = DEFAULT_THRESHOLD,
                 memory_bytes: int = DEFAULT_MEMORY, names: Sequence[str] = ("first", "second"),
                 cancel: threading.Event | None = None) -> GraphComparison:
    """Run `first` (with `first_edits`) and `second` (with `second_edits`) on `x` and compare every node of
    `graph`, which both must compute (same architecture, same ids). The target is resolved on the first run
    (its top class) and the second backpropagates the same one. See the module's docstring for the memory bound."""
    modules = _module(first, "first"), _module(second, "second")
    _check(x, graph, cancel)
    check_threshold(threshold)
    if isinstance(memory_bytes, bool) or not isinstance(memory_bytes, int) or memory_bytes < 0:
        raise SpecError(f"memory_bytes must be a whole number of bytes >= 0, not {memory_bytes!r}.")
    edits = _edits(first_edits), _edits(second_edits)
    seeded = _Seeded(modules[0], 0)
    watch = Watch(keep=None, budget=memory_bytes, cancel=cancel)
    with seeded:
        ran_a = run(modules[0], x, graph, watch, target=parse_target(target), edits=edits[0], cancel=cancel)
    against = Watch(against=watch.kept, cancel=cancel)
    with seeded:
        ran_b = run(modules[1], x, graph, against, target=ran_a.target, edits=edits[1], cancel=cancel)
    diffs = _read(against.diffs)
    kept = _ids(graph, ran_a, watch.left)
    left = [k for k in watch.left if k in kept]
    watch.kept.clear()
    rounds = 1
    while left:
        rounds += 1
        keeper = Watch(stats=False, grads=False, keep=set(left), budget=memory_bytes, cancel=cancel)
        with seeded:
            run(modules[0], x, graph, keeper, target=ran_a.target, edits=edits[0], cancel=cancel, backward=False)
        against = Watch(stats=False, grads=False, against=keeper.kept, cancel=cancel)
        with seeded:
            run(modules[1], x, graph, against, target=ran_a.target, edits=edits[1], cancel=cancel, backward=False)
        diffs.update(_read(against.diffs))
        left = list(keeper.left)
        keeper.kept.clear()
    tensors = {final: (diffs[key][0], diffs[key][1]) for key, final in _ids(graph, ran_a, diffs).items()}
    return GraphComparison.of(graph, tensors, threshold, _values(graph, ran_a), _values(graph, ran_b),
                              names=tuple(names), rounds=rounds)


def compare_edits(model: LoadedModel | nn.Module, x: torch.Tensor, graph: Graph, edits: Iterable[Edit | str], *,
                  target: str | int | Target | None = None, threshold: float = DEFAULT_THRESHOLD,
                  memory_bytes: int = DEFAULT_MEMORY, cancel: threading.Event | None = None) -> GraphComparison:
    """The reach of `edits`: the model without them (the baseline, `first`) and with them (`second`),
    compared at every node of `graph` (the Compare tab's edited vs baseline)."""
    return compare_runs(model, model, x, graph, second_edits=edits, target=target, threshold=threshold,
                        memory_bytes=memory_bytes, names=("baseline", "edited"), cancel=cancel)


def compare_models(first: LoadedModel | nn.Module, second: LoadedModel | nn.Module, x: torch.Tensor, graph: Graph,
                   *, edits: Iterable[Edit | str] | None = None, target: str | int | Target | None = None,
                   threshold: float = DEFAULT_THRESHOLD, memory_bytes: int = DEFAULT_MEMORY,
                   cancel: threading.Event | None = None) -> GraphComparison:
    """Two checkpoints of one architecture (the app's Against) on one graph: the relative L2 divergence of
    every node, the first divergent one (`edits` apply to both, as `diff_models` applies them)."""
    names = tuple(str(getattr(m, "source", None) or w) for m, w in ((first, "first"), (second, "second")))
    return compare_runs(first, second, x, graph, first_edits=edits, second_edits=edits, target=target,
                        threshold=threshold, memory_bytes=memory_bytes, names=names, cancel=cancel)
