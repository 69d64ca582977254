"""The random-logit check (Sixt et al., "When explanations lie", ICML 2020; in Adebayo et al.'s spirit): the map
of a randomly drawn other class, and how alike it is to the target class's map (scores.similarity). A map
that explains the class should differ; one that shows the image (or only the model's features) need not.

The other class is drawn uniformly from the model's classes other than the target, from a seed (None: one
is drawn and returned). Both maps are made with the same options, the noise seed and baseline included."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ...common.errors import SpecError
from ...records.methods import class_agnostic
from ...sources.loaded import LoadedModel, detects
from ...target.objective import primary_output
from ...target.text import parse_target
from ..entry import attribute
from ..passes.raised import model_errors
from ..record import Attribution, _device
from ..scores.similarity import Similarity, similarity
from .randomisation import (
    again_options,
    check_method,
    check_seed_of,
    module_of,
    same_layer,
    stop,
    with_cancel,
)

_CLASS_TARGETS = ("auto", "top1", "index")


@dataclass(frozen=True)
class RandomLogit:
    """The target class's map, a randomly drawn other class's, and how alike they are."""

    method: str
    target_index: int
    other_index: int
    seed: int
    seed_drawn: bool
    map: np.ndarray
    other_map: np.ndarray
    similarity: Similarity
    seconds: float

    def as_json(self) -> dict:
        """Everything but the maps."""
        return {"check": "random-logit", "method": self.method, "target_index": self.target_index,
                "other_index": self.other_index, "seed": self.seed, "seed_drawn": self.seed_drawn,
                "seconds": self.seconds} | self.similarity.as_json()


def _check(model, method: str, target, options) -> nn.Module:
    check_method(method, options)
    if method in class_agnostic():
        raise SpecError(f"{method} explains no class, so there is no other class to compare it with: random-logit "
                        "needs a method that explains a class.")
    kind = parse_target(target).kind
    if kind not in _CLASS_TARGETS:
        raise SpecError(f"Random-logit compares the maps of two classes; the target {target!r} is no class "
                        "(give a class index or top1).")
    module = module_of(model, "Random-logit")
    if isinstance(model, LoadedModel) and detects(model):
        raise SpecError("Random-logit compares a classifier's classes; a detector's boxes are not classes.")
    return module


def classes(module: nn.Module, x: torch.Tensor) -> int:
    """How many classes the model's output has for x (one forward without gradients); a SpecError when < 2."""
    with torch.no_grad(), model_errors("Random-logit"):
        output = primary_output(module(x.detach().to(_device(module))))
    if output.ndim != 2 or output.shape[1] < 2:
        raise SpecError(f"Random-logit draws another class, and this model's output (shape {tuple(output.shape)}) "
                        "has fewer than 2 classes.")
    return int(output.shape[1])


def other_class(target_index: int, count: int, seed: int) -> int:
    """The class drawn uniformly from the `count` classes other than `target_index`, from `seed`."""
    draw = int(np.random.default_rng(seed).integers(count - 1))
    return draw if draw < target_index else draw + 1


def random_logit(model: LoadedModel | nn.Module, x: torch.Tensor, method: str, target=None,
                 layer: str | None = None, options: dict | None = None, seed: int | None = None, cancel=None,
                 progress=None, original: Attribution | None = None) -> RandomLogit:
    """The random-logit check of `method`'s map of x for `target` (a class: its index, or top1 by default);
    `layer` and `options` as `attribute` takes them; `original` (the target's map already made) saves a map.
    `cancel()` True stops it before a map (RunCancelled); `progress(done, 2)` after each map."""
    started = time.perf_counter()
    module = _check(model, method, target, options)
    if original is not None and (not isinstance(original, Attribution) or original.method != method):
        raise SpecError(f"The original map given to random-logit is a {method} Attribution of the same target.")
    seed, drawn = check_seed_of(seed, "The random-logit seed")
    count = classes(module, x)
    opts = with_cancel(method, options, cancel)
    if original is None:
        stop(cancel, "Random-logit")
        original = attribute(model, x, method, target, layer, opts)
    if progress is not None:
        progress(1, 2)
    index = original.target_index
    if index is None or not 0 <= index < count:
        raise SpecError(f"Random-logit needs the map of one class; this {method} map explains {original.target}.")
    other = other_class(index, count, seed)
    stop(cancel, "Random-logit")
    found = attribute(model, x, method, other, same_layer(original, layer), again_options(original, opts))
    if progress is not None:
        progress(2, 2)
    return RandomLogit(method, index, other, seed, drawn, original.map, found.map,
                       similarity(original.map, found.map), time.perf_counter() - started)
