"""Which layers of a model occlusion's boxes can run (`core.occlusion_regions`), found by tracing it with
torch.fx once per module and input shape: a layer is local when it is spatially local on 4-D tensors with a known
reach (`nn.Conv2d` with zero padding, `nn.MaxPool2d`, `nn.AvgPool2d` counting its padding) or elementwise
(modules, functions and methods whose tensors all have its output's shape: BatchNorm with running statistics,
ReLU, add, ...; `torch.cat` along channels), and its sources are local. Each node also gets what one copy of it
costs, in multiply-adds (an element read and written counts `ELEMENT`), for choosing where the boxes stop.
"""

from __future__ import annotations

import math
import operator
import weakref
from dataclasses import dataclass, field

import torch
import torch.fx as fx
import torch.nn.functional as F
from torch import nn

# What reading and writing one element costs, in multiply-adds (this CPU: ReLU 0.5 ns an element, resnet50's
# convolutions 0.017 ns a multiply-add)
ELEMENT = 30
#: per module: {input shape: Graph, or None where it cannot be traced}
_GRAPHS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_STATISTICS = (nn.BatchNorm2d, nn.Dropout, nn.Dropout2d)  # elementwise only in eval mode (running statistics)
_ELEMENTWISE_MODULES = (nn.BatchNorm2d, nn.ReLU, nn.ReLU6, nn.LeakyReLU, nn.Hardswish, nn.Hardsigmoid, nn.SiLU,
                        nn.GELU, nn.Sigmoid, nn.Tanh, nn.ELU, nn.Mish, nn.Identity, nn.Dropout, nn.Dropout2d)
_ELEMENTWISE_FUNCTIONS = frozenset({operator.add, operator.sub, operator.mul, operator.truediv, torch.add,
                                    torch.sub, torch.mul, torch.relu, torch.sigmoid, torch.tanh, F.relu, F.relu6,
                                    F.silu, F.gelu, F.hardswish, F.hardsigmoid, F.leaky_relu})
_ELEMENTWISE_METHODS = frozenset({"add", "sub", "mul", "relu", "sigmoid", "tanh", "contiguous"})


@dataclass
class Op:
    """How one traced node runs on boxes: "input" (the image), "window" (reads a k x k reach at stride s: a
    convolution or a pool) or "point" (elementwise, its tensors on its own box)."""

    node: fx.Node
    kind: str
    sources: list = field(default_factory=list)
    k: tuple = (1, 1)
    s: tuple = (1, 1)
    p: tuple = (0, 0)
    d: tuple = (1, 1)
    pad: float = 0.0  # the value outside the extent, for a window
    cost: float = 0.0  # multiply-adds of one whole copy
    run: object = None


@dataclass(repr=False)
class Graph:
    """A model's trace, the shapes its nodes had on one copy, and each node's `Op` where it is local."""

    traced: fx.GraphModule
    shapes: dict
    ops: dict  # node -> Op, for the local nodes whose sources are local, in the trace's order
    costs: dict  # node -> multiply-adds of one whole copy, every node
    modules: dict  # call_module target -> the module traced
    plans: dict = field(default_factory=dict)  # the occlusion jobs' plans (core.occlusion_regions)

    def still(self, module: nn.Module) -> bool:
        """The module is still what was traced: the same modules at the same paths, those that are local only
        in eval mode still in it."""
        try:
            same = all(module.get_submodule(t) is m for t, m in self.modules.items())
        except AttributeError:
            return False
        return same and not any(m.training for m in self.modules.values() if isinstance(m, _STATISTICS))


def _pair(v) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _conv(m: nn.Conv2d, region: torch.Tensor) -> torch.Tensor:
    return F.conv2d(region, m.weight, m.bias, m.stride, 0, m.dilation, m.groups)


def _conv_cost(m: nn.Module, out_shape) -> float:
    """A convolution's multiply-adds for one copy, and its output's elements written."""
    return math.prod(out_shape[1:]) * ((m.in_channels // m.groups) * math.prod(m.kernel_size) + ELEMENT)


def _window_op(node: fx.Node, m: nn.Module, source: fx.Node, out_shape) -> Op | None:
    kind = type(m)
    if kind is nn.Conv2d and m.padding_mode == "zeros" and not isinstance(m.padding, str):
        return Op(node, "window", [source], _pair(m.kernel_size), _pair(m.stride), _pair(m.padding),
                  _pair(m.dilation), 0.0, _conv_cost(m, out_shape), lambda r, m=m: _conv(m, r))
    if kind is nn.MaxPool2d and not m.return_indices:
        k, s, d = _pair(m.kernel_size), _pair(m.stride or m.kernel_size), _pair(m.dilation)
        return Op(node, "window", [source], k, s, _pair(m.padding), d, -math.inf,
                  math.prod(out_shape[1:]) * k[0] * k[1], lambda r, k=k, s=s, d=d: F.max_pool2d(r, k, s, 0, d))
    if kind is nn.AvgPool2d and not m.ceil_mode and (m.count_include_pad or _pair(m.padding) == (0, 0)):
        k, s = _pair(m.kernel_size), _pair(m.stride or m.kernel_size)
        return Op(node, "window", [source], k, s, _pair(m.padding), (1, 1), 0.0,
                  math.prod(out_shape[1:]) * k[0] * k[1],
                  lambda r, k=k, s=s, m=m: F.avg_pool2d(r, k, s, 0, False, True, m.divisor_override))
    return None


def _classify(traced: fx.GraphModule, node: fx.Node, shapes: dict) -> Op | None:
    """The node's `Op` when it is spatially local on 4-D tensors, else None."""
    out = shapes.get(node)
    if out is None or len(out) != 4:
        return None
    if node.op == "placeholder":
        return Op(node, "input")
    sources = list(dict.fromkeys(n for n in node.all_input_nodes))
    if not sources or any(shapes.get(n) is None or len(shapes[n]) != 4 for n in sources):
        return None
    if node.op == "call_module":
        m = traced.get_submodule(node.target)
        if len(node.args) != 1 or node.kwargs or not isinstance(node.args[0], fx.Node):
            return None
        if getattr(m, "inplace", False) and len(node.args[0].users) > 1:
            return None  # would change a value another layer reads
        found = _window_op(node, m, node.args[0], out)
        if found is not None:
            return found
        if (type(m) in _ELEMENTWISE_MODULES and shapes[node.args[0]] == out
                and not (isinstance(m, _STATISTICS) and (m.training or getattr(m, "running_var", 0) is None))):
            return Op(node, "point", sources, cost=ELEMENT * math.prod(out[1:]), run=m)
        return None
    if node.op == "call_function" and node.target is torch.cat:
        dim = node.kwargs.get("dim", node.args[1] if len(node.args) > 1 else 0)
        parts = node.args[0]
        if (dim in (1, -3) and isinstance(parts, (list, tuple)) and all(isinstance(n, fx.Node) for n in parts)
                and all(shapes[n][2:] == out[2:] for n in parts)):
            return Op(node, "point", sources, cost=ELEMENT * math.prod(out[1:]), run=_called(node))
        return None
    elementwise = ((node.op == "call_function" and node.target in _ELEMENTWISE_FUNCTIONS)
                   or (node.op == "call_method" and node.target in _ELEMENTWISE_METHODS))
    if elementwise and all(shapes[n] == out for n in sources) and not node.kwargs.get("inplace", False):
        return Op(node, "point", sources, cost=ELEMENT * math.prod(out[1:]), run=_called(node))
    return None


def _called(node: fx.Node):
    """node's function or method, called with its tensors' values looked up in `values`."""
    def run(values: dict):
        args = fx.node.map_arg(node.args, values.__getitem__)
        kwargs = fx.node.map_arg(node.kwargs, values.__getitem__)
        if node.op == "call_method":
            return getattr(args[0], node.target)(*args[1:], **kwargs)
        return node.target(*args, **kwargs)
    return run


def _walk(traced: fx.GraphModule, x: torch.Tensor, seen, last: fx.Node | None = None) -> None:
    """Runs the trace on x node by node without gradients, telling `seen(node, value)` after each, up to `last`
    (else the output); a value is let go once no later node reads it. Not `fx.Interpreter.run`: it makes a tqdm
    bar on every run, disabled, yet tqdm starts its monitor thread for it, and that thread outlives the job (the
    app's leak check caught one)."""
    interpreter = fx.Interpreter(traced)
    interpreter.args_iter = iter((x,))
    env = interpreter.env = {}
    with torch.no_grad():
        for node in traced.graph.nodes:
            env[node] = interpreter.run_node(node)
            seen(node, env[node])
            if node is last or node.op == "output":
                return
            for gone in interpreter.user_to_last_uses.get(node, ()):
                del env[gone]


def record(traced: fx.GraphModule, x: torch.Tensor, keep, last: fx.Node) -> dict:
    """{node: a copy of its output on x} for the nodes in `keep` (a copy: a later in-place layer cannot change
    it), running the trace up to `last` only."""
    keep, values = set(keep), {}

    def seen(node, value):
        if node in keep:
            values[node] = value.detach().clone()
    _walk(traced, x, seen, last)
    return values


def graph_of(module: nn.Module, x: torch.Tensor) -> Graph | None:
    """The module's trace and local ops for inputs of x's shape (once, then remembered); None where it cannot be
    traced or run traced."""
    try:
        known = _GRAPHS.setdefault(module, {})
    except TypeError:
        known = {}
    shape = tuple(x.shape[1:])
    if shape not in known:
        try:
            known[shape] = _trace(module, x)
        except Exception:  # noqa: BLE001 - a model fx cannot trace, or that fails traced: its copies run whole
            known[shape] = None
    return known[shape]


def _trace(module: nn.Module, x: torch.Tensor) -> Graph | None:
    traced = fx.symbolic_trace(module)
    if sum(n.op == "placeholder" for n in traced.graph.nodes) != 1:
        return None
    shapes: dict = {}

    def seen(node, value):
        if isinstance(value, torch.Tensor):
            shapes[node] = tuple(value.shape)
    _walk(traced, x[:1], seen)
    ops, costs = {}, {}
    for node in traced.graph.nodes:
        op = _classify(traced, node, shapes)
        if op is not None and all(n in ops for n in op.sources):
            ops[node] = op
        costs[node] = op.cost if op is not None else _cost(traced, node, shapes)
    modules = {n.target: traced.get_submodule(n.target) for n in traced.graph.nodes if n.op == "call_module"}
    return Graph(traced, shapes, ops, costs, modules)


def _cost(traced: fx.GraphModule, node: fx.Node, shapes: dict) -> float:
    """Multiply-adds of a node the boxes do not run (convolutions and linear layers; others their size)."""
    out = shapes.get(node)
    if out is None:
        return 0.0
    if node.op == "call_module":
        m = traced.get_submodule(node.target)
        if isinstance(m, nn.modules.conv._ConvNd):
            return _conv_cost(m, out)
        if isinstance(m, nn.Linear):
            return math.prod(out[1:]) * m.in_features
    return float(ELEMENT * math.prod(out[1:]))
