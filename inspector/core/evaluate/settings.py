"""What an evaluation over a folder is asked to compute, checked without torch (the command says a wrong name
before the model loads): the methods, the metrics, the protocol deletion and insertion follow, and the metrics'
settings."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..common.errors import SpecError
from ..records.methods import METHODS
from ..records.protocols import DEFAULT_PROTOCOL, check_protocol
from .metrics import METRIC_ROWS

#: The seed of the methods that draw noise or masks (SmoothGrad, D-RISE): fixed, so that a job resumed, or run
#: again, gives the same numbers for every image.
METHOD_SEED = 0

#: The confidence of the summary's intervals.
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Settings:
    """The metrics' settings: the protocol deletion and insertion follow (records.protocols), their steps K (None:
    the protocol's own), and any option a metric of its own takes (`options`: sorted (name, value) pairs, e.g.
    ("road_noise", 0.01)), all recorded with the numbers and part of the job's key."""

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


def check_batch(batch) -> None:
    """SpecError unless the batch (images decoded ahead, and handed to a Ray replica, at a time) is a whole number
    of at least 1."""
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise SpecError(f"--batch must be a whole number of at least 1, not {batch!r}.")


def check_request(methods, metrics, settings: Settings) -> tuple[tuple[str, ...], tuple[str, ...], Settings]:
    """(the methods, the metrics, the settings with the protocol's own K where none is given) checked by name, with
    the protocol and the steps; one line for what is wrong."""
    methods = names_of(methods, "--methods", [m.name for m in METHODS.values() if m.classifiers])
    metrics = names_of(metrics, "--metrics", list(METRIC_ROWS))
    rule = check_protocol(settings.protocol)
    steps = settings.steps
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 1):
        raise SpecError(f"--metric-steps must be a whole number of at least 1, not {steps!r}.")
    if steps is not None and rule.steps is None:
        raise SpecError(f"The protocol {rule.name} fixes its steps ({rule.pixels_a_step} pixels a step): leave "
                        f"--metric-steps out, or use the protocol {DEFAULT_PROTOCOL}.")
    return methods, metrics, replace(settings, steps=rule.steps if steps is None else steps)
