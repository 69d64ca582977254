"""Model-parameter randomisation (MPRT; Adebayo et al., "Sanity checks for saliency maps", NeurIPS 2018): does
the map change when the model it explains does?

The map is made again with the model's layers (sanity.reinit: modules that own parameters, in forward order)
re-initialised from the top (the logits) down: `cascading`, each step re-initialising one more layer, so the
last step's model is wholly random; or `independent`, each step re-initialising that one layer of the
trained model. Each step's map is compared with the original (scores.similarity: Spearman of |map| and of
the signed map, SSIM). A map that explains the model changes: the verdict is "changes with the model" when the
wholly random model's map (cascading; independent: the step least like the original) has Spearman(|map|)
below the threshold (0.5 unless told).

The work is done on a copy of the model (`copy.deepcopy`): the caller's model is never changed. Every step
explains the original map's class, with the original's noise seed and baseline, so only the model changes.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import time
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ...common.errors import RunCancelled, RunError, SpecError, first_line
from ...records.methods import METHODS
from ...records.sanity import MPRT_MODES, MPRT_THRESHOLD, check_mode, check_threshold
from ...sources.loaded import LoadedModel, detects
from ...sources.seeds import check_seed, new_seed
from ..entry import attribute, check_options, method_row, takes_baseline
from ..passes.raised import model_errors
from ..record import Attribution, _device
from ..scores.similarity import Similarity, pictures, similarity
from .reinit import forward_order, own_state, put_back, reinitialise

MODES, THRESHOLD = MPRT_MODES, MPRT_THRESHOLD  # (records.sanity: read before torch loads)


@dataclass(frozen=True)
class Randomisation:
    """An MPRT run: step 0 is the original map, step i the map with `layers[:i]` (cascading) or `layers[i - 1]`
    alone (independent) re-initialised; `layers` top (logits) first, `how` each layer was re-initialised."""

    method: str
    mode: str
    seed: int
    seed_drawn: bool  # no seed was given: this one was drawn (say it, to run it again)
    threshold: float
    target: str
    target_index: int | None
    layers: tuple[str, ...]
    how: tuple[str, ...]
    maps: tuple[np.ndarray, ...]
    similarities: tuple[Similarity, ...]
    changes: bool | None  # None: undefined (the original map is constant)
    verdict: str
    decided_by: int  # the step the verdict reads
    seconds: float

    @property
    def steps(self) -> tuple[str, ...]:
        """Each step's name: "original", then the layer it re-initialised."""
        return ("original",) + self.layers

    @property
    def curve(self) -> np.ndarray:
        """Spearman(|map|) at each step, the curve under the strip."""
        return np.array([s.spearman_abs for s in self.similarities])

    def as_json(self) -> dict:
        """Everything but the maps (numbers and words for --json and exports)."""
        return {"check": "mprt", "method": self.method, "mode": self.mode, "seed": self.seed,
                "seed_drawn": self.seed_drawn, "threshold": self.threshold, "target": self.target,
                "target_index": self.target_index, "changes": self.changes, "verdict": self.verdict,
                "decided_by": self.decided_by, "seconds": self.seconds,
                "steps": [{"step": i, "layer": name, "how": how} | s.as_json() for i, (name, how, s)
                          in enumerate(zip(self.steps, ("",) + self.how, self.similarities))]}


def check_method(method: str, options: dict | None) -> None:
    """The method and its options, before any model work (entry's checks: one-line SpecErrors)."""
    method_row(method)
    check_options(method, options)


def check_seed_of(seed, what: str) -> tuple[int, bool]:
    """(the seed to use, whether it was drawn): `seed` checked, or a new one when None."""
    given = check_seed(int(seed) if isinstance(seed, np.integer) else seed, what)
    return (new_seed(), True) if given is None else (given, False)


def with_cancel(method: str, options: dict | None, cancel) -> dict:
    """`options` with `cancel` for a method that runs in passes (so Esc stops inside a map, too)."""
    opts = dict(options or {})
    if cancel is not None and method_row(method).passes:
        opts["cancel"] = cancel
    return opts


def again_options(original: Attribution, options: dict) -> dict:
    """The options that make the same map again on another model: the original's noise or mask seed and its
    baseline (as the tensor it was), where the method drew or made them."""
    opts = dict(options)
    details = dict(original.details)
    if METHODS[original.method].option("seed") is not None and opts.get("seed") is None and "seed" in details:
        opts["seed"] = int(details["seed"])
    if original.baseline is not None and takes_baseline(original.method, opts.get("of", "saliency")):
        opts["baseline"] = torch.as_tensor(original.baseline)[None]
        opts.pop("blur_sigma", None)
        opts.pop("baseline_seed", None)
    return opts


def copied(model: LoadedModel | nn.Module) -> LoadedModel | nn.Module:
    """A deep copy of the model to re-initialise (the caller's is never touched); a RunError in one line for a
    model that cannot be copied."""
    try:
        if isinstance(model, LoadedModel):
            return dataclasses.replace(model, module=copy.deepcopy(model.module))
        return copy.deepcopy(model)
    except Exception as exc:  # noqa: BLE001 - whatever a module's own __deepcopy__ or pickling raises
        raise RunError(f"MPRT re-initialises a copy of the model, and this model cannot be copied "
                       f"(copy.deepcopy raised {type(exc).__name__}: {first_line(exc)}).") from exc


def module_of(model, check: str) -> nn.Module:
    module = model.module if isinstance(model, LoadedModel) else model
    if not isinstance(module, nn.Module):
        raise SpecError(f"{check} takes a torch model (nn.Module), not {type(module).__name__}.")
    return module


def _check(model, method, options, mode, threshold, original) -> None:
    check_method(method, options)
    check_mode(mode)
    check_threshold(threshold)
    module = module_of(model, "MPRT")
    if not any(True for _ in module.parameters()):
        raise SpecError("MPRT re-initialises the model's parameters, and this model has none.")
    if isinstance(model, LoadedModel) and detects(model):
        raise SpecError("MPRT checks a classifier's maps; it does not follow a detector's boxes yet.")
    if original is not None and (not isinstance(original, Attribution) or original.method != method):
        raise SpecError(f"The original map given to MPRT is a {method} Attribution made with the same arguments.")


def mprt(model: LoadedModel | nn.Module, x: torch.Tensor, method: str, target=None, layer: str | None = None,
         options: dict | None = None, mode: str = "cascading", seed: int | None = None,
         threshold: float = THRESHOLD, cancel=None, progress=None, original: Attribution | None = None
         ) -> Randomisation:
    """MPRT of `method`'s map of x (see the module's docstring): `target`, `layer` and `options` as `attribute`
    takes them; `seed` (None: one is drawn and returned) seeds every re-initialisation; `original` (the map
    already made with these arguments) saves making it again. `cancel()` True stops it before a map
    (RunCancelled); `progress(done, total)` after each map, total the steps + 1."""
    started = time.perf_counter()
    _check(model, method, options, mode, threshold, original)
    seed, drawn = check_seed_of(seed, "The MPRT seed")
    opts = with_cancel(method, options, cancel)
    if original is None:
        stop(cancel)
        original = attribute(model, x, method, target, layer, opts)
    if original.detections is not None:
        raise SpecError("MPRT checks a classifier's maps; it does not follow a detector's boxes yet.")
    random = copied(model)
    random_module = module_of(random, "MPRT")
    with model_errors("MPRT"):
        layers = forward_order(random_module, lambda: random_module(x.detach().to(_device(random_module))))
    top_first = layers[::-1]
    again = again_options(original, opts)
    step_target = original.target_index if original.target_index is not None else target
    step_layer = same_layer(original, layer)
    total = len(top_first) + 1
    maps, similar = [original.map], [similarity(original.map, original.map)]
    if progress is not None:
        progress(1, total)
    for i, chosen in enumerate(top_first):
        stop(cancel)
        part = random_module.get_submodule(chosen.name)
        kept = own_state(part) if mode == "independent" else None
        reinitialise(random_module, chosen, seed)
        try:
            found = attribute(random, x, method, step_target, step_layer, again)
        finally:
            if kept is not None:
                put_back(part, kept)
        maps.append(found.map)
        similar.append(similarity(original.map, found.map))
        if progress is not None:
            progress(i + 2, total)
    changes, verdict, step = _verdict(original.map, similar, mode, threshold, top_first)
    return Randomisation(method, mode, seed, drawn, float(threshold), original.target, original.target_index,
                         tuple(lay.name for lay in top_first), tuple(lay.how for lay in top_first), tuple(maps),
                         tuple(similar), changes, verdict, step, time.perf_counter() - started)


def stop(cancel, what: str = "MPRT") -> None:
    """Before each map: `cancel()` True stops the check (RunCancelled, "WHAT cancelled.")."""
    if cancel is not None and cancel():
        raise RunCancelled(f"{what} cancelled.")


def same_layer(original: Attribution, layer: str | None) -> str | None:
    """The layer every later map is made at: the one asked for, else the one the original's method chose."""
    return original.layer if layer is None and method_row(original.method).layer else layer


def _verdict(original: np.ndarray, similar: list[Similarity], mode: str, threshold: float, layers):
    """(changes, the verdict in words, the step it reads): cascading reads the last step (the wholly random
    model), independent the step least like the original."""
    absolute, _signed = pictures(original)
    if float(absolute.max() - absolute.min()) == 0.0:
        return None, "undefined: the original map is constant, it ranks no pixel", 0
    values = [s.spearman_abs for s in similar]
    step = len(values) - 1 if mode == "cascading" else 1 + int(np.argmin(values[1:]))
    value = values[step]
    where = ("with every layer re-initialised" if mode == "cascading"
             else f"with {layers[step - 1].name} re-initialised")
    changes = bool(value < threshold) if not math.isnan(value) else None
    word = "changes with the model" if changes else "does not change with the model"
    return changes, f"{word}: Spearman(|map|) {value:.3f} {'<' if changes else '>='} {threshold:g} {where}", step
