"""Recording the graph of one eager forward: module hooks say when each module call opens and closes, a
TorchFunctionMode sees every torch function called between them, and tensors are followed by identity from the
node that made them to the nodes that read them.

Why eager recording, not `torch.fx` symbolic tracing: tracing runs the forward on proxies, and fails on
detectors, Hugging Face models and any data-dependent control flow; recording runs the real forward on the
real input, so every model that runs records, and the graph is exactly what this input's forward did.

What becomes what:
- A leaf module (no submodules; a TorchScript module, whose insides take no hooks; a path given in `leaves`) is
  one node per call; every op inside it belongs to it and is not recorded. A non-leaf module's call is a group.
- A torch function called outside leaves that reads at least one tensor made by the forward and returns a tensor
  is a node (`ops` says which are folded, which make tensors from nothing but a shape, which read values).
  Tensors that come from nowhere (parameters, buffers, constants, `torch.arange`) are no edges.
- An in-place op (`relu_`, `x += y`, `x[i] = y`) is a node and becomes the maker of the tensor it changed (and of
  the tensor that one views, when it is a view).
- `F.multi_head_attention_forward` (what `nn.MultiheadAttention` runs, torchvision's ViT among others) is one
  torch function to the mode, which is off while its handler runs: its insides, the attention's products, would
  be hidden. It runs again under the mode, from a copy that skips its own torch-function check (a copy of the
  function object, nothing patched): its in-projection, `scaled_dot_product_attention` (or `bmm` and `softmax`)
  and out-projection are nodes of the module's group.
- Tensors are known by identity through weak references checked on every look-up: a freed tensor's id may be
  reused, but then the reference no longer returns it. Nothing is kept alive, so a recording needs no more memory
  than the forward (a detector at 800 px holds every activation otherwise).
- `.item()`, `.tolist()`, `bool(t)` on a tensor the forward made, and ops whose output shape depends on values
  (`nonzero`, `nms`, a boolean mask), are noted as data dependence: the graph is this input's forward's.

The forward runs without autograd; the model keeps exactly the hooks it had and no mode stays on, however the
recording ends.
"""

from __future__ import annotations

import sys
import threading
import types
import weakref
from collections import Counter
from dataclasses import replace

import torch
import torch.nn.functional as F
from torch import nn
from torch.overrides import TorchFunctionMode

from ...engine.hookset import _tensor_positions
from ...engine.stats import dtype_name
from ...common.errors import RunCancelled
from ...common.keys import Key, LayerCall
from .methods import caller_of_module, method_context, wrap_method_runs
from .nodes import MODEL_NODE, Edge, Group, Node
from .ops import DATA_SHAPED, FOLDED, NOT_FLOW, SHAPE_ONLY, VALUE_READS, op_name


def tensors_in(value, depth: int = 0) -> list[torch.Tensor]:
    """The tensors in a module's or function's arguments or output: in tuples, lists, dicts (a Hugging Face
    ModelOutput, a detector's list of dicts) and the attributes of plain objects (torchvision's ImageList),
    five levels deep; each once."""
    if isinstance(value, torch.Tensor):
        return [value]
    if depth > 5 or value is None or isinstance(value, (str, bytes, int, float, bool, torch.Size)):
        return []
    if isinstance(value, dict):
        items = value.values()
    elif isinstance(value, (list, tuple)):
        items = value
    elif hasattr(value, "__dict__") and not isinstance(value, (nn.Module, type, types.ModuleType, types.FunctionType,
                                                               types.MethodType)):
        items = vars(value).values()
    else:
        return []
    found: dict[int, torch.Tensor] = {}  # by id: every one is alive while `value` is
    for item in items:
        for t in tensors_in(item, depth + 1):
            found.setdefault(id(t), t)
    return list(found.values())


def _unchecked(function):
    """A copy of a composite torch function that skips its own `has_torch_function` check (its globals say
    False), so that the ops inside it dispatch to the mode instead of the whole call."""
    names = dict(function.__globals__)
    names["has_torch_function"] = lambda *_: False
    copy = types.FunctionType(function.__code__, names, function.__name__, function.__defaults__,
                              function.__closure__)
    copy.__kwdefaults__ = function.__kwdefaults__
    return copy


#: Composites whose insides are recorded (see the module's docstring).
_COMPOSITES = {F.multi_head_attention_forward: _unchecked(F.multi_head_attention_forward)}


def _module_keys(path: str, call: int, output) -> dict[int, str]:
    """id(tensor) -> the engine's capture key of each output tensor the engine captures (`HookSet._post_hook`:
    one tensor, or the tensors of a tuple or list, numbered when more than one)."""
    positions = _tensor_positions(output)
    if positions is None:
        return {id(output): str(Key(path, "output", call))}
    items = [output[i] for i in positions]
    many = len(items) > 1
    return {id(t): str(Key(path, "output", call, slot if many else None)) for slot, t in enumerate(items)}


class Recorder(TorchFunctionMode):
    """One recording: `attach(model)`, run the forward under the mode (`with recorder:`), `finish(output)`;
    `detach()` in any case. What it recorded is in `nodes`, `edges`, `groups()`, `data_dependence`, `notes`."""

    def __init__(self, leaves: frozenset[str] = frozenset(), cancel: threading.Event | None = None) -> None:
        super().__init__()
        self.extra_leaves = leaves
        self.cancel = cancel  # set: the next module call raises RunCancelled
        self.nodes: list[Node] = []
        self.edges: list[Edge] = []
        self.notes: list[str] = []
        self.data_dependence: dict[str, None] = {}  # an ordered set
        self._edge_seen: set[tuple[str, int | None, str]] = set()
        # id(tensor) -> (weak reference, maker's id, index among its outputs, the engine's key)
        self._made: dict[int, tuple[weakref.ref, str, int | None, str | None]] = {}
        self._group_info: dict[str, tuple] = {}  # id -> (path, type, call, parent, method)
        self._children: dict[str, list[str]] = {"": []}
        self._exits: dict[str, list[tuple[str, int | None, str]]] = {}  # group id -> its output tensors
        self._open: list[str] = [""]  # the groups open now, innermost last ('': the top)
        self._frames: list[tuple[str, str, int]] = []  # per module call open now: (kind, id, call); kind is
        # "leaf", "group" or "inside" (a call inside a leaf)
        self._inside = 0  # > 0 while a leaf runs: its ops are its own
        self._quiet = 0  # > 0 while the recorder's own code runs under the mode
        self._calls: Counter[str] = Counter()
        self._names: Counter[str] = Counter()  # function calls per `group.op()`
        self._bases: dict[str, str] = {}  # function node id -> its `group.op()`
        self._handles: list = []
        self._paths: dict[int, str] = {}  # id(module) -> path
        self._types: dict[str, str] = {}  # path -> the module's class name
        self._contexts: dict[str, tuple | None] = {}  # node or group id -> the method it ran in (`methods`)
        self._held = None  # the frame of the method the last node ran in, kept alive (`methods.method_context`)
        # told (node id, index, tensor) of every tensor a node makes, as it is made (`graph.values`); the ids are
        # those before `finish` renumbers the functions it keeps (`renamed`: old id -> new id)
        self.watch = None
        self.renamed: dict[str, str] = {}

    # -- the model's modules -------------------------------------------------------------
    def attach(self, model: nn.Module) -> None:
        """Hooks on every module that is not inside a leaf (the model itself is no group: it is the graph)."""
        leaves: set[str] = set()
        for path, module in model.named_modules():  # each module once, by its first path (as the layer tree)
            self._paths[id(module)] = path
            self._types[path] = type(module).__name__
            parts = path.split(".")
            if not path or any(".".join(parts[:i]) in leaves for i in range(1, len(parts))):
                continue
            scripted = isinstance(module, torch.jit.ScriptModule)
            leaf = scripted or path in self.extra_leaves or not any(True for _ in module.children())
            if leaf:
                leaves.add(path)
            if scripted:
                self.notes.append(f"{path} is TorchScript, which takes no hooks: its calls are not in the graph, "
                                  f"and what it returns comes from nowhere.")
                continue
            self._handles.append(module.register_forward_pre_hook(self._pre_hook(path, leaf), with_kwargs=True))
            self._handles.append(module.register_forward_hook(self._post_hook(path)))

    def detach(self) -> None:
        while self._handles:
            self._handles.pop().remove()
        self._made.clear()
        self._held = None

    def _pre_hook(self, path: str, leaf: bool):
        def hook(module: nn.Module, args: tuple, kwargs: dict):
            if self.cancel is not None and self.cancel.is_set():
                raise RunCancelled()
            call = self._calls[path]
            self._calls[path] += 1
            if self._inside:
                self._frames.append(("inside", "", call))
                return None
            self._quiet += 1
            try:
                ident = str(LayerCall(path, call))
                self._contexts[ident], self._held = method_context(caller_of_module(sys._getframe(1)), self._paths)
                if leaf:
                    self._add_node(Node(ident, "module", type(module).__name__, path, call, self._open[-1]))
                    self._read(tensors_in((args, kwargs)), ident)
                    self._inside += 1
                    self._frames.append(("leaf", ident, call))
                else:
                    self._group_info[ident] = (path, type(module).__name__, call, self._open[-1], "")
                    self._children[self._open[-1]].append(ident)
                    self._children[ident] = []
                    self._open.append(ident)
                    self._frames.append(("group", ident, call))
            finally:
                self._quiet -= 1
            return None

        return hook

    def _post_hook(self, path: str):
        def hook(_module: nn.Module, _args: tuple, output):
            kind, ident, call = self._frames.pop()
            if kind == "group":
                self._open.pop()
                self._quiet += 1
                try:
                    self._exits[ident] = self._outputs(output, _module_keys(path, call, output))
                finally:
                    self._quiet -= 1
            elif kind == "leaf":
                self._inside -= 1
                self._quiet += 1
                try:
                    self._make(output, ident, _module_keys(path, call, output))
                finally:
                    self._quiet -= 1
            return None

        return hook

    # -- nodes and tensors ------------------------------------------------------------------
    def _add_node(self, node: Node) -> None:
        self.nodes.append(node)
        self._children[node.group].append(node.id)

    def _make(self, output, maker: str, keys: dict[int, str] | None = None) -> None:
        """The tensors in `output` are made (or last changed) by `maker` from now on."""
        found = tensors_in(output)
        many = len(found) > 1
        for i, t in enumerate(found):
            self._made[id(t)] = (weakref.ref(t), maker, i if many else None, keys.get(id(t)) if keys else None)
            if self.watch is not None:
                self._quiet += 1
                try:
                    self.watch(maker, i if many else None, t)
                finally:
                    self._quiet -= 1

    def fold(self, new: torch.Tensor, old: torch.Tensor, watch: bool = False) -> None:
        """`new` stands for `old` from now on (made by `old`'s maker): an edit hook's result. `watch`: the maker's
        values are `new`'s (an edited output is what every later node reads)."""
        entry = self._maker(old)
        if entry is None or new is old:
            return
        self._made[id(new)] = (weakref.ref(new), *entry[1:])
        if watch and self.watch is not None:
            self._quiet += 1
            try:
                self.watch(entry[1], entry[2], new)
            finally:
                self._quiet -= 1

    def _outputs(self, output, keys: dict[int, str]) -> list[tuple[str, int | None, str]]:
        """(maker, index, the group's capture key) of each tensor a group returns that the engine captures."""
        found = []
        for t in tensors_in(output):
            entry = self._maker(t)
            if entry is not None and id(t) in keys:
                found.append((entry[1], entry[2], keys[id(t)]))
        return found

    def _maker(self, t: torch.Tensor):
        entry = self._made.get(id(t))
        return entry if entry is not None and entry[0]() is t else None

    def _read(self, tensors: list[torch.Tensor], target: str) -> None:
        """Edges to `target` from the makers of the tensors it reads (those the forward made)."""
        for t in tensors:
            entry = self._maker(t)
            if entry is None:
                continue
            _, source, index, key = entry
            seen = (source, index, target)
            if seen not in self._edge_seen:
                self._edge_seen.add(seen)
                self.edges.append(Edge(source, target, tuple(t.shape), dtype_name(t), index, key))

    def _where(self) -> str:
        group = self._open[-1]
        return self._group_info[group][0] if group else "the model's own forward"

    # -- the functions between modules -------------------------------------------------------
    def __torch_function__(self, func, types_, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self._inside or self._quiet:
            return func(*args, **kwargs)
        composite = _COMPOSITES.get(func) if isinstance(func, types.FunctionType) else None
        if composite is not None:
            with self:  # the mode is off while this handler runs: on again for the composite's insides
                return composite(*args, **kwargs)
        raw = getattr(func, "__name__", "")
        attribute = getattr(getattr(func, "__self__", None), "__name__", None) if raw == "__get__" else None
        op, inplace = op_name(raw, attribute)
        if op in NOT_FLOW:
            return func(*args, **kwargs)
        read = [t for t in tensors_in((args, kwargs)) if self._maker(t) is not None]
        result = func(*args, **kwargs)
        if not read:
            return result
        out = tensors_in(result)
        if inplace and not out and args and isinstance(args[0], torch.Tensor):
            out = [args[0]]  # __setitem__ returns None
        if not out:
            if op in VALUE_READS:
                self.data_dependence.setdefault(f"{op}() in {self._where()}")
            return result
        if op in SHAPE_ONLY:
            return result
        first = self._maker(args[0]) if args and isinstance(args[0], torch.Tensor) else None
        if op in FOLDED and first is not None and len(out) == 1 and out[0].dtype == args[0].dtype and \
                out[0].shape == args[0].shape:
            self._made[id(out[0])] = (weakref.ref(out[0]), *first[1:])  # the same tensor, under another name
            return result
        self._note_data_shapes(op, args)
        inplace = inplace or any(o is t for o in out for t in read)
        self._function_node(op, inplace, read, out)
        return result

    def _note_data_shapes(self, op: str, args: tuple) -> None:
        masks = op == "getitem" and len(args) > 1 and any(t.dtype == torch.bool for t in tensors_in(args[1]))
        if op in DATA_SHAPED or masks or (op == "where" and len(args) == 1):
            self.data_dependence.setdefault(f"{'a boolean mask' if masks else op + '()'} in {self._where()}")

    def _function_node(self, op: str, inplace: bool, read: list[torch.Tensor], out: list[torch.Tensor]) -> None:
        group = self._open[-1]
        base = f"{group}.{op}()" if group else f"{op}()"
        k = self._names[base]
        self._names[base] += 1
        ident = str(LayerCall(base, k))
        self._bases[ident] = base
        # the caller of __torch_function__
        self._contexts[ident], self._held = method_context(sys._getframe(2), self._paths)
        self._add_node(Node(ident, "function", op, "", 0, group, inplace))
        self._read(read, ident)
        self._make(out, ident)
        for t in out if inplace else ():  # a view changed in place changed what it views: its base is made here too
            base = t._base
            if base is not None and self._maker(base) is not None:
                self._made[id(base)] = (weakref.ref(base), ident, None, None)

    # -- the model's input and output -----------------------------------------------------------
    def start(self, x: torch.Tensor) -> None:
        self._add_node(Node("input", "input", "input"))
        self._make(x, "input", {id(x): str(Key("", "input"))})

    def whole(self, model: nn.Module, x: torch.Tensor):
        """The model as one node (TorchScript, a model without submodules): its output."""
        self._add_node(Node(MODEL_NODE, "module", getattr(model, "original_name", type(model).__name__)))
        self._read([x], MODEL_NODE)
        output = model(x)
        self._make(output, MODEL_NODE, _module_keys("", 0, output))
        return output

    def forward(self, model: nn.Module, x: torch.Tensor, whole: bool):
        """One forward of `model` on x recorded from its input to its output (`whole`: as one node): its output."""
        self.start(x)
        if whole:
            output = self.whole(model, x)
        else:
            self.attach(model)
            with self:
                output = model(x)
        self.finish(output)
        return output

    def finish(self, output) -> None:
        """The output node; then the functions whose results lead nowhere are left out (`_prune`), and the runs of
        functions a module's other method ran become groups (`methods`)."""
        self._add_node(Node("output", "output", "output"))
        self._read(tensors_in(output), "output")
        self._prune()
        self.nodes = wrap_method_runs(self.nodes, self._children, self._group_info, self._contexts, self._types)

    def _prune(self) -> None:
        """Leave out the functions from which no edge leads to a module or the output: what the forward only
        looked at (`for image in images` unbinds a batch to read each one's size; a maximum read with `.item()`)
        is no data flow to draw. Groups left with nothing in them go too."""
        feeds: dict[str, list[str]] = {}
        for edge in self.edges:
            feeds.setdefault(edge.target, []).append(edge.source)
        live = {n.id for n in self.nodes if n.kind != "function"}
        todo = list(live)
        while todo:
            for source in feeds.get(todo.pop(), ()):
                if source not in live:
                    live.add(source)
                    todo.append(source)
        renamed = self.renamed = self._renumber([n for n in self.nodes if n.id in live])
        self.nodes = [replace(n, id=renamed.get(n.id, n.id)) for n in self.nodes if n.id in live]
        self.edges = [replace(e, source=renamed.get(e.source, e.source), target=renamed.get(e.target, e.target))
                      for e in self.edges if e.source in live and e.target in live]
        for ident in [*reversed(self._group_info), ""]:  # children before parents, the top last
            kept = [renamed.get(c, c) for c in self._children[ident] if c in live]
            self._children[ident] = kept
            exits = self._exits.get(ident, ())
            self._exits[ident] = [(renamed.get(n, n), i, k) for n, i, k in exits if n in live]
            if kept:
                live.add(ident)
            elif ident:
                del self._group_info[ident]
        self._contexts = {renamed.get(i, i): c for i, c in self._contexts.items() if i in live}

    def _renumber(self, kept: list[Node]) -> dict[str, str]:
        """Old id -> new id of the functions kept whose number changed: `op()`, `op()#1`, ... count the ones kept."""
        counts: Counter[str] = Counter()
        renamed = {}
        for node in kept:
            if node.kind == "function":
                base = self._bases[node.id]
                ident = str(LayerCall(base, counts[base]))
                counts[base] += 1
                if ident != node.id:
                    renamed[node.id] = ident
        return renamed

    def groups(self) -> tuple[Group, ...]:
        return tuple(Group(ident, path, type_name, call, parent, tuple(self._children[ident]),
                           tuple(self._exits.get(ident, ())), method)
                     for ident, (path, type_name, call, parent, method) in self._group_info.items())
