"""The layer tree: every module by its `named_modules()` path, with what one run shows of it."""

from __future__ import annotations

import difflib
import fnmatch
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the records are torch-free: the app receives them before it imports the engine
    import torch
    from torch import nn

from ..common.arguments import need_instance
from ..common.errors import InspectorError, RunError, SpecError, UnknownKeyError
from ..common.hooks import together


@dataclass(frozen=True)
class LayerInfo:
    path: str  # '' is the model itself
    type_name: str
    parameters: int  # including submodules
    is_leaf: bool
    depth: int
    output_shapes: tuple[tuple[int, ...], ...] = ()  # of the first call
    calls: int = 0  # per forward
    # its 4-D output is (B, H, W, C) (True) or (B, C, H, W) (False), as the model's own modules tell
    # (`_Layouts`); None: not 4-D, no forward, or nothing in the model tells
    channels_last: bool | None = None

    @property
    def name(self) -> str:
        return self.path.rsplit(".", 1)[-1] if self.path else "(model)"

    @property
    def is_conv(self) -> bool:
        """A convolution leaf that runs: the layers Grad-CAM, default ticks and benchmarks pick from."""
        return self.is_leaf and self.calls > 0 and "Conv" in self.type_name  # Conv2d, LazyConv2d, timm's StdConv2d

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "type": self.type_name,
            "parameters": self.parameters,
            "leaf": self.is_leaf,
            "output_shapes": [list(s) for s in self.output_shapes],
            "calls": self.calls,
        }


def in_backbone(path: str) -> bool:
    """A module of a detector's backbone, not its FPN: torchvision's `backbone.`, transformers' DETR family's
    `model.backbone.`."""
    inside = path.startswith("backbone.") or path.startswith("model.backbone.")
    return inside and not path.startswith("backbone.fpn")


@dataclass(frozen=True)
class LayerTree:
    layers: tuple[LayerInfo, ...]  # in named_modules() order, model first
    # every parameter by its path (`fc1.weight`, ViT's `class_token`), in named_parameters() order
    params: tuple[str, ...] = ()
    detects: bool = False  # the example run answered with boxes and scores (a detector)

    def __iter__(self):
        return iter(self.layers)

    def __len__(self) -> int:
        return len(self.layers)

    def get(self, path: str) -> LayerInfo:
        for layer in self.layers:
            if layer.path == path:
                return layer
        raise UnknownKeyError(f"No layer named {path!r}. {self._examples()}")

    def layouts(self) -> dict[str, bool]:
        """Path -> whether its 4-D output is channels-last, for the layers the model tells it of
        (`records.tokens.is_channels_last` reads it)."""
        return {l.path: l.channels_last for l in self.layers if l.channels_last is not None}

    def children(self, path: str) -> list[LayerInfo]:
        prefix = f"{path}." if path else ""
        depth = path.count(".") + 1 if path else 1
        return [l for l in self.layers if l.path.startswith(prefix) and l.path and l.depth == depth]

    @property
    def leaves(self) -> list[str]:
        """Leaf modules that run: when the tree was built with a forward, leaves it never called
        (`out_proj` inside `nn.MultiheadAttention`, whose weights are used directly) are left out."""
        ran = any(l.calls for l in self.layers)
        return [l.path for l in self.layers if l.is_leaf and l.path and (l.calls or not ran)]

    def never_called(self) -> list[str]:
        """Leaf modules the tree's forward never called (none when it was built without one)."""
        if not any(l.calls for l in self.layers):
            return []
        return [l.path for l in self.layers if l.is_leaf and l.path and not l.calls]

    def convolutions(self) -> list[str]:
        """Paths of the convolutions that run in a forward, in model order."""
        return [l.path for l in self.layers if l.path and l.is_conv]

    def default_ticks(self, task: str = "classification") -> set[str]:
        """A few layers worth looking at first: the first and last convolution, and the last leaf that runs.
        A detector's last convolution and leaf regress boxes, which a box's score sends no gradient to: its
        backbone's last convolution and the last leaf scoring classes (`cls_score`, `cls_logits`,
        `classification_head...`, DETR's `class_labels_classifier`) instead."""
        convs = self.convolutions()
        called = [l.path for l in self.layers if l.is_leaf and l.path and l.calls]
        if task == "detection":
            backbone = [p for p in convs if in_backbone(p)]
            scoring = [p for p in called if "cls" in p or "class" in p]
            if backbone and scoring:
                return set(convs[:1] + backbone[-1:] + scoring[-1:])
        picked = set(convs[:1] + convs[-1:])
        if called:
            picked.add(called[-1])
        return picked

    def loose_params(self, modules: list[str], patterns: str | list[str]) -> list[str]:
        """Parameter paths `patterns` name that the selected `modules` do not own themselves: with
        `all`, every parameter owned by a module that is not a running leaf (ViT's `class_token` on the
        model, `encoder.pos_embedding`, `nn.MultiheadAttention`'s `in_proj_weight`, ConvNeXt's
        `layer_scale`, the weights of a leaf its parent uses directly); an exact parameter path or a
        glob matching parameter paths selects those."""
        if isinstance(patterns, str):
            patterns = patterns.split(",")
        owned = set(modules)
        loose = [p for p in self.params if p.rpartition(".")[0] not in owned]
        chosen: set[str] = set()
        for raw in patterns:
            pattern = raw.strip()
            if pattern == "all":
                chosen.update(loose)
            elif pattern in self.params or any(ch in pattern for ch in "*?["):
                chosen.update(p for p in loose if fnmatch.fnmatchcase(p, pattern))
        return [p for p in loose if p in chosen]

    def select(self, patterns: str | list[str], params: bool = False) -> list[str]:
        """Paths matching `all`, `type:Conv2d`, globs (`layer4.*`) or exact paths, in model order.
        With `params`, a pattern may also name parameters (`class_token`, `*.pos_embedding`), and
        `all` adds the parameters no running leaf owns (see `loose_params`), after the modules."""
        if isinstance(patterns, str):
            patterns = [p for p in patterns.split(",")]
        chosen: set[str] = set()
        paths = [l.path for l in self.layers if l.path]
        named = set(self.params) if params else set()
        for raw in patterns:
            pattern = raw.strip()
            if not pattern:
                continue
            if pattern == "all":
                hits = set(self.leaves)
            elif pattern.startswith("type:"):
                wanted = pattern[5:]
                hits = {l.path for l in self.layers if l.path and fnmatch.fnmatchcase(l.type_name, wanted)}
                if not hits:
                    types = sorted({l.type_name for l in self.layers})
                    raise SpecError(f"No layer of type {wanted!r}. Types in this model: {', '.join(types)}.")
            elif any(ch in pattern for ch in "*?["):
                hits = {p for p in paths if fnmatch.fnmatchcase(p, pattern)}
                if not hits and not any(fnmatch.fnmatchcase(p, pattern) for p in named):
                    raise SpecError(f"No layer matches {pattern!r}. {self._examples()}")
            elif pattern in paths:
                hits = {pattern}
            elif pattern in named:
                hits = set()  # a parameter: loose_params adds it
            else:
                close = difflib.get_close_matches(pattern, paths, n=5)
                hint = f" Did you mean: {', '.join(close)}?" if close else ""
                raise SpecError(f"No layer named {pattern!r}.{hint} {self._examples()}")
            chosen |= hits
        modules = [p for p in paths if p in chosen]
        return modules + (self.loose_params(modules, patterns) if params else [])

    def _examples(self) -> str:
        leaves = self.leaves
        shown = ", ".join(leaves[:8]) + (", ..." if len(leaves) > 8 else "")
        return f"Layers are named by path ({shown}); use `network-inspector layers` to list them all."


def _shapes(value) -> list[tuple[int, ...]]:
    import torch

    if isinstance(value, torch.Tensor):
        return [tuple(value.shape)]
    if isinstance(value, (tuple, list)):
        return [s for v in value for s in _shapes(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _shapes(v)]
    return []


#: Leaves that keep their input's layout (elementwise, parameter-free), by class name where torch.nn has none.
_KEEPS_LAYOUT = ("StochasticDepth", "DropPath")


def _layout_role(module: nn.Module) -> str | None:
    """How a leaf tells the layout of the 4-D tensors it reads and makes: "last" (a plain LayerNorm over one
    axis normalises the last one, a Linear multiplies it: channels last), "first" (a convolution, a BatchNorm,
    GroupNorm or InstanceNorm, 2-d pooling, a LayerNorm2d that permutes around its norm: channels at axis 1),
    "to_last" / "to_first" (torchvision's Permute([0, 2, 3, 1]) / ([0, 3, 1, 2])), "same" (an elementwise
    leaf without parameters: activations, dropout, Identity, stochastic depth), or None (it tells nothing)."""
    from torch import nn
    from torch.nn.modules import activation, batchnorm, conv, dropout, instancenorm, pooling

    name = type(module).__name__
    if isinstance(module, nn.LayerNorm):
        if type(module).forward is nn.LayerNorm.forward:
            return "last" if len(module.normalized_shape) == 1 else None
        return "first" if name.endswith("2d") else None  # torchvision's and timm's LayerNorm2d
    if isinstance(module, nn.Linear):
        return "last"
    if isinstance(module, (conv._ConvNd, batchnorm._BatchNorm, instancenorm._InstanceNorm, nn.GroupNorm,
                           pooling._MaxPoolNd, pooling._AvgPoolNd, pooling._AdaptiveAvgPoolNd,
                           pooling._AdaptiveMaxPoolNd)) or name == "FrozenBatchNorm2d":
        return "first"
    if name == "Permute" and hasattr(module, "dims"):
        dims = list(module.dims)
        return {(0, 2, 3, 1): "to_last", (0, 3, 1, 2): "to_first"}.get(tuple(dims))
    elementwise = isinstance(module, (nn.Identity, dropout._DropoutNd)) or name in _KEEPS_LAYOUT or (
        type(module).__module__ == activation.__name__ and not isinstance(module, nn.MultiheadAttention))
    if elementwise and not any(True for _ in module.parameters()):
        return "same"
    return None


class _Layouts:
    """Which 4-D outputs of a model are channels-last, from one forward: every tensor a telling leaf reads or
    makes (`_layout_role`) is marked; any other module (an elementwise leaf, a residual block, a container)
    whose output has its input's shape joins the two (their layouts could differ only where H == W == C);
    a module's output is what its tensor was marked, by the leaves that made or read it or a joined one.
    Tensors are known by identity while alive (weak references: nothing is kept). Marked both ways: unsaid."""

    def __init__(self) -> None:
        self._ids: dict[int, tuple[weakref.ref, int]] = {}
        self._parent: list[int] = []
        self._marks: dict[int, set[bool]] = {}
        self.outputs: dict[str, int] = {}  # path -> node of its first call's 4-D output

    def _node(self, tensor) -> int:
        held = self._ids.get(id(tensor))
        if held is not None and held[0]() is tensor:
            return held[1]
        node = len(self._parent)
        self._parent.append(node)
        self._ids[id(tensor)] = (weakref.ref(tensor), node)
        return node

    def _root(self, node: int) -> int:
        while self._parent[node] != node:
            self._parent[node] = node = self._parent[self._parent[node]]
        return node

    def _mark(self, tensor, last: bool) -> None:
        self._marks.setdefault(self._root(self._node(tensor)), set()).add(last)

    def _join(self, a, b) -> None:
        ra, rb = self._root(self._node(a)), self._root(self._node(b))
        if ra != rb:
            self._parent[rb] = ra
            self._marks.setdefault(ra, set()).update(self._marks.pop(rb, set()))

    def hooks(self, path: str, module: nn.Module, leaf: bool) -> list:
        """The hooks that watch `module` (registered by the caller's loop; handles returned)."""
        import torch

        role = _layout_role(module) if leaf else None

        def four(value):
            return value if isinstance(value, torch.Tensor) and value.ndim == 4 else None

        def after(_module, args, output):
            out = four(output)
            if out is None:
                return
            if path not in self.outputs:
                self.outputs[path] = self._node(out)
            seen = four(args[0]) if args else None
            if role in ("last", "first"):
                self._mark(out, role == "last")
                if seen is not None:
                    self._mark(seen, role == "last")
            elif role in ("to_last", "to_first"):
                self._mark(out, role == "to_last")
                if seen is not None:
                    self._mark(seen, role != "to_last")
            elif seen is not None and seen.shape == out.shape:  # "same", a block, a container: one layout in
                self._join(seen, out)  # and out (another would need H == W == C)

        return [module.register_forward_hook(after)]

    def result(self) -> dict[str, bool]:
        """Path -> channels-last, for the 4-D outputs the model marked one way only."""
        found = {}
        for path, node in self.outputs.items():
            marks = self._marks.get(self._root(node), set())
            if len(marks) == 1:
                found[path] = next(iter(marks))
        return found


#: The channels-last word of each model's layers (`channel_layouts`), kept from its last layer tree.
_LAYOUTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def channel_layouts(model: nn.Module, example: torch.Tensor) -> dict[str, bool]:
    """Path -> whether the layer's 4-D output is (B, H, W, C), as the model's own modules tell (`_Layouts`);
    worked out once per model, in the run that builds its layer tree (one no-grad run at `example` when no
    tree was built with an example yet)."""
    kept = _LAYOUTS.get(model)
    if kept is None:
        build_layer_tree(model, example)
        kept = _LAYOUTS[model]
    return kept


def build_layer_tree(model: nn.Module, example: torch.Tensor | None = None) -> LayerTree:
    """The module tree; with an example input, one no-grad run adds output shapes and call counts."""
    import torch
    from torch import nn

    need_instance(model, nn.Module, "model", "a torch.nn.Module")
    need_instance(example, (torch.Tensor, type(None)), "example", "a torch.Tensor or None")

    named = list(model.named_modules(remove_duplicate=False))
    seen: dict[int, str] = {}
    modules: list[tuple[str, nn.Module]] = []
    for path, module in named:
        if id(module) in seen:  # a module registered under two names: keep the first path
            continue
        seen[id(module)] = path
        modules.append((path, module))
    shapes: dict[str, tuple[tuple[int, ...], ...]] = {}
    calls: dict[str, int] = {}
    detects = False
    layouts: dict[str, bool] = {}
    if example is not None:
        from ..detection.outputs import is_detection_output

        def record(path: str):
            def hook(_module, _args, output):
                calls[path] = calls.get(path, 0) + 1
                shapes.setdefault(path, tuple(_shapes(output)))
            return hook

        watch = _Layouts()

        def hooks():
            for path, module in modules:
                yield module.register_forward_hook(record(path))
                yield from watch.hooks(path, module, not any(True for _ in module.children()))

        try:
            with together(hooks()), torch.no_grad():
                detects = is_detection_output(model(example))
            layouts = _LAYOUTS[model] = watch.result()
        except InspectorError:
            raise
        except Exception as exc:
            raise RunError(f"The model raised {type(exc).__name__} on the example input of shape "
                           f"{tuple(example.shape)}: {exc}") from exc
    layers = []
    for path, module in modules:
        layers.append(
            LayerInfo(
                path=path,
                type_name=type(module).__name__,
                parameters=sum(p.numel() for p in module.parameters()),
                is_leaf=not any(True for _ in module.children()),
                depth=path.count(".") + 1 if path else 0,
                output_shapes=shapes.get(path, ()),
                calls=calls.get(path, 0),
                channels_last=layouts.get(path),
            )
        )
    return LayerTree(tuple(layers), tuple(name for name, _ in model.named_parameters()), detects)
