"""What an evaluation over a folder is asked to compute, checked without torch (the command says a wrong name
before the model loads): the methods, the metrics, the protocol deletion and insertion follow, and the metrics'
settings (each metric's own, `METRIC_OPTIONS`: the seeds fixed, so a job resumed or run again gives the same files)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from ..common.errors import SpecError
from ..records.methods import METHODS, class_agnostic
from ..records.protocols import DEFAULT_PROTOCOL, ROAD_NOISE, ROAD_PERCENTAGES, check_protocol, check_road
from ..records.sanity import MPRT_MODES, MPRT_THRESHOLD, check_mode, check_threshold
from ..sources.seeds import check_seed
from .metrics import METRIC_ROWS

#: The seed of the methods that draw noise or masks (SmoothGrad, D-RISE): fixed, so that a job resumed, or run
#: again, gives the same numbers for every image.
METHOD_SEED = 0

#: The confidence of the summary's intervals.
CONFIDENCE = 0.95

#: The seed of every metric that draws (ROAD's noise, MPRT's re-initialisation, random-logit's class) unless told:
#: fixed, not drawn, for the same reason as METHOD_SEED.
METRIC_SEED = 0


@dataclass(frozen=True)
class MetricOption:
    """A setting a metric takes (metrics.Metric.options): its name (options' key; the command's flag is
    --name-with-dashes), its default in an evaluation, its check (the value back, or a one-line SpecError), a line
    of help, and the type and metavar the command reads it with."""

    name: str
    default: object
    check: Callable[[object], object]
    help: str
    type: type = int
    metavar: str = "N"

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


def _noise(value):
    check_road(value, ROAD_PERCENTAGES)
    return float(value)


def _seed(name: str):
    return lambda value: check_seed(value, "--" + name.replace("_", "-"))


#: Every metric's own settings by name, with their defaults.
METRIC_OPTIONS: dict[str, MetricOption] = {o.name: o for o in (
    MetricOption("road_noise", ROAD_NOISE, _noise, f"road: the standard deviation of the noise added to each "
                 f"imputed value, in the model's input units (default {ROAD_NOISE}; 0: none)", float, "SIGMA"),
    MetricOption("road_seed", METRIC_SEED, _seed("road_seed"), "road: seeds the noise"),
    MetricOption("mprt", MPRT_MODES[0], check_mode, f"mprt: how the layers are re-initialised, "
                 f"{' or '.join(MPRT_MODES)} (default {MPRT_MODES[0]})", str, "MODE"),
    MetricOption("mprt_seed", METRIC_SEED, _seed("mprt_seed"), "mprt: seeds the re-initialisation"),
    MetricOption("mprt_threshold", MPRT_THRESHOLD, check_threshold, f"mprt: the map changes with the model when "
                 f"its Spearman(|map|) falls below this (default {MPRT_THRESHOLD})", float, "T"),
    MetricOption("random_logit_seed", METRIC_SEED, _seed("random_logit_seed"), "random-logit: seeds the other "
                 "class drawn"),
)}


@dataclass(frozen=True)
class Settings:
    """The metrics' settings: the protocol deletion and insertion follow (records.protocols), their steps K (None:
    the protocol's own), and the settings of its own each metric asked takes (`options`: sorted (name, value)
    pairs, e.g. ("road_noise", 0.01); check_request puts in the defaults), all recorded with the numbers and part of
    the job's key."""

    protocol: str = DEFAULT_PROTOCOL
    steps: int | None = None
    options: tuple[tuple[str, object], ...] = ()

    def option(self, name: str, default=None):
        return dict(self.options).get(name, default)

    def as_dict(self) -> dict:
        return {"protocol": self.protocol, "steps": self.steps, **dict(self.options)}


def names_of(text: str | list | tuple, flag: str, known) -> tuple[str, ...]:
    """Comma-separated names (or a list of them) checked against `known`, in the order given, once each; a
    SpecError naming what is known otherwise."""
    names = text.split(",") if isinstance(text, str) else list(text) if isinstance(text, (list, tuple)) else None
    if names is None or not all(isinstance(n, str) for n in names):
        raise SpecError(f"{flag} takes names, comma-separated, not {text!r}.")
    names = tuple(dict.fromkeys(n.strip() for n in names if n.strip()))
    unknown = [n for n in names if n not in known]
    if not names or unknown:
        raise SpecError(f"{flag} takes {', '.join(known)} (comma-separated), not {text!r}.")
    return names


def method_options(method: str, cancel=None) -> dict:
    """The options `method` runs with in an evaluation: its defaults, the seed where it draws one, and `cancel`
    where it runs in passes (a long map stops inside the image)."""
    row = METHODS[method]
    options: dict = {}
    if row.option("seed") is not None:
        options["seed"] = METHOD_SEED
    if row.passes and cancel is not None:
        options["cancel"] = cancel
    return options


def check_options(options, metrics: tuple[str, ...]) -> tuple[tuple[str, object], ...]:
    """The metrics' own settings (a dict or (name, value) pairs; None values are not given) checked, each metric's
    defaults put in for what is not given, sorted: an unknown name, a bad value and a setting no metric asked for
    reads are one line."""
    given = {k: v for k, v in dict(options or {}).items() if v is not None}
    unknown = [k for k in given if k not in METRIC_OPTIONS]
    if unknown:
        raise SpecError(f"Unknown metric setting {unknown[0]!r}. Settings: {', '.join(METRIC_OPTIONS)}.")
    read = {name: metric for metric in metrics for name in METRIC_ROWS[metric].options}
    for name in given:
        if name not in read:
            takers = [m.name for m in METRIC_ROWS.values() if name in m.options]
            flag = METRIC_OPTIONS[name].flag
            raise SpecError(f"{flag} is for --metrics {' or '.join(takers)}: add it to --metrics, or leave {flag} "
                            "out.")
    return tuple(sorted((name, METRIC_OPTIONS[name].check(given.get(name, METRIC_OPTIONS[name].default)))
                        for name in read))


def check_batch(batch) -> None:
    """SpecError unless the batch (images decoded ahead, and handed to a Ray replica, at a time) is a whole number
    of at least 1."""
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise SpecError(f"--batch must be a whole number of at least 1, not {batch!r}.")


def check_request(methods, metrics, settings: Settings) -> tuple[tuple[str, ...], tuple[str, ...], Settings]:
    """(the methods, the metrics, the settings with the protocol's own K where none is given and each metric's own
    settings filled in) checked by name, with the protocol, the steps and the metrics' settings; one line for what
    is wrong."""
    methods = names_of(methods, "--methods", [m.name for m in METHODS.values() if m.classifiers])
    metrics = names_of(metrics, "--metrics", list(METRIC_ROWS))
    agnostic = [m for m in methods if m in class_agnostic()]
    if "random-logit" in metrics and agnostic:
        raise SpecError(f"{agnostic[0]} explains no class, so random-logit has no other class to compare its map "
                        f"with: leave {agnostic[0]} or random-logit out.")
    options = check_options(settings.options, metrics)
    rule = check_protocol(settings.protocol)
    steps = settings.steps
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 1):
        raise SpecError(f"--metric-steps must be a whole number of at least 1, not {steps!r}.")
    if steps is not None and rule.steps is None:
        raise SpecError(f"The protocol {rule.name} fixes its steps ({rule.pixels_a_step} pixels a step): leave "
                        f"--metric-steps out, or use the protocol {DEFAULT_PROTOCOL}.")
    return methods, metrics, replace(settings, steps=rule.steps if steps is None else steps, options=options)
