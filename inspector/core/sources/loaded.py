"""A loaded model: the module with its source, weights, preprocessing, labels and notes, and what
runs reuse of it (its layer tree and which captures may share memory)."""

from __future__ import annotations

import itertools
import weakref
from dataclasses import dataclass, field

import torch
from torch import nn

from .layers import LayerTree, build_layer_tree
from .preprocess import Preprocess
from .sharing import Sharing


@dataclass
class LoadedModel:
    module: nn.Module
    source: str
    weights: str = "random"
    labels: list[str] | None = None
    preprocess: Preprocess | None = None
    input_shape: tuple[int, ...] | None = None  # the default input, batch included
    kind: str = "python"
    notes: list[str] = field(default_factory=list)
    seed: int | None = None  # the seed the random weights were made with (None: not random or not seeded)
    task: str = "classification"  # or "segmentation" (a (batch, classes, H, W) output)

    def example_input(self) -> torch.Tensor | None:
        """A zero tensor of the default input shape in the model's own floating-point type (a float64 model
        refuses a float32 input), for the layer tree's one small run."""
        return torch.zeros(self.input_shape, dtype=self.dtype) if self.input_shape else None

    @property
    def device(self) -> torch.device:
        return next((p.device for p in self.module.parameters()), torch.device("cpu"))

    @property
    def dtype(self) -> torch.dtype:
        """The type of the model's first floating-point parameter (or buffer); torch's default without one."""
        tensors = (t for t in itertools.chain(self.module.parameters(), self.module.buffers()) if t.is_floating_point())
        return next((t.dtype for t in tensors), torch.get_default_dtype())

    @property
    def most_batch(self) -> int | None:
        """The most copies of an input one forward takes (`most_batch`): 1 for a program exported with a static
        batch; None where any number goes."""
        return most_batch(self.module)


#: per module: the most copies one forward of it takes (None: any), found once (`most_batch`)
_MOST_BATCH: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def most_batch(module: nn.Module) -> int | None:
    """The most copies of an input one forward of `module` takes, found once per module from the torch.export
    programs in it (what `torch.export.unflatten` or `ExportedProgram.module()` makes: each checks its inputs'
    shapes before it runs): a program's first input's batch where it is static (torch.export's default: the
    example's batch, 1), or the upper bound a `torch.export.Dim` put on it; the least of them. None: no program
    in it limits its batch (a dynamic batch with no upper bound, or no program)."""
    try:
        return _MOST_BATCH[module]
    except KeyError:
        pass
    except TypeError:  # a module that cannot be a weak dictionary's key (its own __eq__): found each time
        return _find_most_batch(module)
    found = _MOST_BATCH[module] = _find_most_batch(module)
    return found


def _find_most_batch(module: nn.Module) -> int | None:
    found = [n for n in (_program_batch(m) for m in module.modules()) if n is not None]
    return min(found) if found else None


def _program_batch(module: nn.Module) -> int | None:
    """The most copies one exported program takes (`most_batch`), read without guarding on its symbols (an `int`
    of a symbolic size would make it static); None for a module that is not a program, or takes any batch."""
    limits = getattr(module, "range_constraints", None)  # {symbol: its range}; `.module()`'s is [] with none
    if not isinstance(limits, (dict, list)) or not isinstance(getattr(module, "graph", None), torch.fx.Graph):
        return None
    inputs = getattr(module, "input_placeholders", None)  # torch.export.unflatten's; else the graph's own inputs
    nodes = inputs if isinstance(inputs, list) else module.graph.find_nodes(op="placeholder")
    first = next((v for v in (n.meta.get("val") for n in nodes) if isinstance(v, torch.Tensor) and v.ndim), None)
    if first is None:
        return None
    size = first.shape[0]
    if isinstance(size, int):
        return size
    bound = limits.get(size.node.expr) if isinstance(limits, dict) else None
    upper = getattr(bound, "upper", None)
    return int(upper) if upper is not None and getattr(upper, "is_Integer", False) else None


def tree_of(model: LoadedModel) -> LayerTree:
    """The layer tree kept with a `LoadedModel`, built with one run at its default input when it has
    one (so `all` leaves out leaves that never run); made on first use, afresh for a replaced module."""
    kept = model.__dict__.get("_tree")
    if kept is None or kept[0] is not model.module:
        example = model.example_input()
        example = example.to(model.device) if example is not None else None
        kept = model.__dict__["_tree"] = (model.module, build_layer_tree(model.module, example))
    return kept[1]


def sharing_of(model: LoadedModel) -> Sharing:
    """The `Sharing` kept with a `LoadedModel` (made on first use; a replaced module starts afresh)."""
    kept = model.__dict__.get("_sharing")
    if kept is None or kept[0] is not model.module:
        kept = model.__dict__["_sharing"] = (model.module, Sharing())
    return kept[1]


def detects(model: LoadedModel) -> bool:
    """`model` is an object detector: its loader says so, or its layer tree's example run answered with boxes
    and scores (torchvision's form)."""
    return model.task == "detection" or tree_of(model).detects
