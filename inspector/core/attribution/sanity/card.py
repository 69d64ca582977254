"""The trust card of one map (issue 55 item 5): the evidence the app shows beside a map of Compare all, made only
when asked because it costs passes. In the order they run:

- deletion and insertion under a named protocol (records.protocols, scores.faithfulness.scored);
- ROAD, most and least relevant first (scores.road through `scored`, its noise seeded);
- MPRT, cascading, its re-initialisation seeded (randomisation.mprt), with its verdict and Spearman(|map|) curve;
- random-logit: the map of another class drawn from the seed (random_logit.random_logit).

One seed is drawn (or given) for the card and seeds ROAD's noise, MPRT's re-initialisation and random-logit's
draw, so the card is made again from the seed it shows. A check the map cannot take (random-logit of a
class-agnostic method, a model with one class) is refused in one line (`Checked.refused`) and the others go on;
Esc (`cancel()`) stops the card. Each check says how long it took."""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from ...common.errors import SpecError, first_line
from ...records.protocols import DEFAULT_PROTOCOL, ROAD_NOISE, check_protocol
from ...sources.loaded import LoadedModel
from ..cancel_within import stops_within_a_module
from ..entry import attribute
from ..record import Attribution
from ..scores.faithfulness import Curve, scored
from .random_logit import RandomLogit, random_logit
from .randomisation import THRESHOLD, Randomisation, check_method, check_seed_of, mprt

#: The checks of a card, in the order they run.
CHECKS = ("deletion and insertion", "ROAD", "MPRT", "random-logit")


@dataclass(frozen=True)
class Checked:
    """How one check went: its time, and why it was refused ("" when it was made)."""

    check: str
    seconds: float
    refused: str = ""


@dataclass(frozen=True)
class TrustCard:
    """The evidence of one map: `curves` (deletion and insertion under `protocol`, then ROAD's two), `mprt` and
    `random_logit` (None when refused), each check's time and refusal (`checked`), and the seed of them all."""

    method: str
    target_index: int | None
    protocol: str
    seed: int
    seed_drawn: bool
    threshold: float
    road_noise: float
    curves: tuple[Curve, ...]
    mprt: Randomisation | None
    random_logit: RandomLogit | None
    checked: tuple[Checked, ...]

    def auc(self, metric: str) -> float | None:
        """The AUC of curve `metric` (deletion, insertion, road-morf, road-lerf); None when not drawn."""
        return next((c.auc for c in self.curves if c.metric == metric), None)

    def of(self, check: str) -> Checked | None:
        return next((c for c in self.checked if c.check == check), None)

    def as_json(self) -> dict:
        return {"method": self.method, "target_index": self.target_index, "protocol": self.protocol,
                "seed": self.seed, "threshold": self.threshold,
                "curves": {c.metric: c.as_json() for c in self.curves},
                "mprt": self.mprt.as_json() if self.mprt else None,
                "random_logit": self.random_logit.as_json() if self.random_logit else None,
                "checked": {c.check: {"seconds": c.seconds, "refused": c.refused} for c in self.checked}}


def trust_card(model: LoadedModel, x: torch.Tensor, method: str, target=None, layer: str | None = None,
               options: dict | None = None, protocol: str = DEFAULT_PROTOCOL, seed: int | None = None,
               threshold: float = THRESHOLD, original: Attribution | None = None, cancel=None,
               phase=None) -> TrustCard:
    """The trust card of `method`'s map of x (`target`, `layer`, `options` as `attribute` takes them; a baseline by
    name among them is the scores' too); `original`: the map already made with them (saves a map). `phase(words)`
    says what runs ("MPRT step 3 of 9"); `cancel()` True stops it (RunCancelled)."""
    check_protocol(protocol)
    check_method(method, options)
    target = target or None  # "" is the run's target, as attribute reads None
    seed, drawn = check_seed_of(seed, "The checks' seed")
    say = phase or (lambda _words: None)
    options = {k: v for k, v in (options or {}).items() if k not in ("metrics", "cancel", "progress")}
    with stops_within_a_module(model.module if isinstance(model, LoadedModel) else model, cancel, "Checking the maps"):
        if original is None:
            say("the map")
            original = attribute(model, x, method, target, layer, dict(options, cancel=cancel) if cancel else options)
        done: list[Checked] = []
        curves: list[Curve] = []

        def timed(check: str, work):
            started = time.perf_counter()
            try:
                value = work()
            except SpecError as exc:  # this check cannot take the map: said, and the others go on
                done.append(Checked(check, time.perf_counter() - started, first_line(exc)))
                return None
            done.append(Checked(check, time.perf_counter() - started))
            return value

        def score(metrics: tuple[str, ...], words: str):
            def passes(i, n):
                say(f"{words}, pass {i} of {n}")

            return scored(model, x, original, metrics, baseline=options.get("baseline"), cancel=cancel,
                          progress=passes, blur_sigma=options.get("blur_sigma"),
                          baseline_seed=options.get("baseline_seed"), protocol=protocol, road_seed=seed).curves

        curves += timed(CHECKS[0], lambda: score(("deletion", "insertion"), f"deletion and insertion ({protocol})")) \
            or ()
        curves += timed(CHECKS[1], lambda: score(("road",), "ROAD")) or ()

        def mprt_step(i, n):
            say(f"MPRT step {min(i, n - 1)} of {n - 1}")

        randomised = timed(CHECKS[2], lambda: mprt(model, x, method, target, layer, options, "cascading", seed,
                                                    threshold, cancel, mprt_step, original))
        other = timed(CHECKS[3], lambda: random_logit(model, x, method, target, layer, options, seed, cancel,
                                                      lambda i, n: say(f"random-logit map {i} of {n}"), original))
    return TrustCard(method, original.target_index, protocol, seed, drawn, float(threshold), ROAD_NOISE,
                     tuple(curves), randomised, other, tuple(done))
