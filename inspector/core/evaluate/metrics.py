"""The metrics an evaluation computes for each map, one row each: a name, the named numbers it gives, and the
function that gives them, imported when first used (so the table is read without torch).

A metric's function is `function(loaded, x, found, settings) -> {number's name: float}`: the loaded model, the
input (1, C, H, W), the map (an Attribution, as `attribute` made it) and the evaluation's Settings; it gives
every number its row names, and nothing else. A metric that takes settings of its own names them (`options`;
their defaults and checks: settings.METRIC_OPTIONS). A new metric is a function and a `register` call."""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Metric:
    """One metric: its `name` (as --metrics takes it), the `numbers` it gives (in the order they are written),
    `run` ("module:function", see the module's docstring), a line of help and the settings of its own it reads
    (`options`: names in settings.METRIC_OPTIONS, e.g. "road_noise")."""

    name: str
    numbers: tuple[str, ...]
    run: str
    help: str = ""
    options: tuple[str, ...] = ()

    def function(self):
        module, _, name = self.run.partition(":")
        return getattr(importlib.import_module(module), name)

    def values(self, loaded, x, found, settings) -> dict[str, float]:
        """The metric's numbers for the map `found` of input `x`, in the row's order; ValueError when its
        function gives other names than the row's."""
        got = self.function()(loaded, x, found, settings)
        if set(got) != set(self.numbers):
            raise ValueError(f"The metric {self.name} gave {', '.join(map(str, got))}; its row names "
                             f"{', '.join(self.numbers)}.")
        return {name: float(got[name]) for name in self.numbers}


_FAITHFULNESS = "inspector.core.evaluate.faithfulness"
_SANITY = "inspector.core.evaluate.sanity"

#: Every metric by name, in the order they are offered.
METRIC_ROWS: dict[str, Metric] = {m.name: m for m in (
    Metric("deletion", ("auc",), f"{_FAITHFULNESS}:deletion",
           "the score as the map's hottest pixels are removed first (low AUC: faithful)"),
    Metric("insertion", ("auc",), f"{_FAITHFULNESS}:insertion",
           "the score as the map's hottest pixels are put back first (high AUC: faithful)"),
    Metric("road", ("morf_auc", "lerf_auc"), f"{_FAITHFULNESS}:road",
           "ROAD, the pixels removed and imputed, the most relevant first (low AUC: faithful) and the least relevant "
           "first (high AUC: faithful)", ("road_noise", "road_seed")),
    Metric("mprt", ("spearman_abs_final", "spearman_final", "ssim_final", "changes"), f"{_SANITY}:mprt",
           "the map with the model's layers re-initialised from the logits down: its similarity to the map at the "
           "step the verdict reads (cascading: every layer re-initialised), and 1 when it changes with the model "
           "(Spearman(|map|) below the threshold), else 0", ("mprt", "mprt_seed", "mprt_threshold")),
    Metric("random-logit", ("spearman_abs", "spearman", "ssim"), f"{_SANITY}:random_logit",
           "the map of a randomly drawn other class: its similarity to the map (low: the map explains its class)",
           ("random_logit_seed",)),
)}


def register(metric: Metric) -> Metric:
    """Add `metric` to the table (ROAD, MPRT, ... or a test's); its name must be new and it must give a number."""
    if metric.name in METRIC_ROWS:
        raise ValueError(f"A metric named {metric.name!r} is already registered.")
    if not metric.numbers or len(set(metric.numbers)) != len(metric.numbers):
        raise ValueError(f"The metric {metric.name} names no number, or one twice: {metric.numbers!r}.")
    METRIC_ROWS[metric.name] = metric
    return metric


def unregister(name: str) -> None:
    """Take a registered metric out again (a test's, when it is done)."""
    METRIC_ROWS.pop(name, None)


def columns(methods: tuple[str, ...], metrics: tuple[str, ...]) -> tuple[tuple[str, str, str], ...]:
    """(method, metric, number) of every value an image gives, in the order they are computed and written."""
    return tuple((method, metric, number) for method in methods for metric in metrics
                 for number in METRIC_ROWS[metric].numbers)
