"""A loaded model: the module with its source, weights, preprocessing, labels and notes, and what
runs reuse of it (its layer tree and which captures may share memory)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import torch
from torch import nn

from ..layers import LayerTree, build_layer_tree
from ..preprocess import Preprocess
from ..sharing import Sharing


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
