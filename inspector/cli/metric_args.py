"""The metrics' flags of a command that scores maps (`attribute`; an `evaluate` over a folder takes the same):
`--metrics`, `--protocol` and `--metric-steps` for deletion and insertion, `--road-noise`, `--road-seed` and
`--road-percentages` for ROAD, `--mprt`, `--mprt-seed` and `--mprt-threshold` for MPRT, `--random-logit-seed` for
random-logit. Torch-free: a bad name or number is one line before torch loads."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from inspector.core.common.errors import SpecError
from inspector.core.records.methods import METRICS
from inspector.core.records.protocols import (
    DEFAULT_PROTOCOL,
    GAMES,
    ROAD_NOISE,
    ROAD_PERCENTAGES,
    check_protocol,
    parse_percentages,
    protocols_help,
)
from inspector.core.records.sanity import MPRT_MODES, MPRT_THRESHOLD, SANITY_CHECKS, check_mode, check_threshold
from inspector.core.sources.seeds import check_seed, new_seed


def add(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--metrics", default=None,
                        help="faithfulness scores and sanity checks of the map, comma-separated: deletion, insertion "
                             "(under --protocol), road (ROAD: the most and the least relevant pixels removed first, "
                             "noisy linear imputation), mprt (the map again with the model's layers re-initialised "
                             "from the logits down: does it change with the model?), random-logit (the map of a "
                             "randomly drawn other class: how alike is it?)")
    parser.add_argument("--protocol", default=None, metavar="NAME",
                        help=f"how deletion and insertion are computed, said with every score (default "
                             f"{DEFAULT_PROTOCOL}): {protocols_help()}")
    parser.add_argument("--metric-steps", type=int, default=None,
                        help="protocol inspector: the deletion and insertion steps K (default 50)")
    parser.add_argument("--road-noise", type=float, default=None, metavar="SIGMA",
                        help=f"road: the standard deviation of the noise added to each imputed value, in the "
                             f"model's input units (default {ROAD_NOISE}; 0: none)")
    parser.add_argument("--road-seed", type=int, default=None, metavar="N",
                        help="road: seeds the noise (default: a new seed, said with the scores)")
    parser.add_argument("--road-percentages", default=None, metavar="P,P,...",
                        help="road: the percentages of the pixels removed, comma-separated, from 0 to below 100 "
                             f"(default {','.join(map(str, ROAD_PERCENTAGES))})")
    parser.add_argument("--mprt", default=None, metavar="MODE",
                        help=f"mprt: {' or '.join(MPRT_MODES)}: the layers re-initialised one more at each step from "
                             f"the logits down, or each one alone (default {MPRT_MODES[0]})")
    parser.add_argument("--mprt-seed", default=None, metavar="N",
                        help="mprt: seeds the re-initialisation (default: a new seed, said with the verdict)")
    parser.add_argument("--mprt-threshold", type=float, default=None, metavar="T",
                        help=f"mprt: the map changes with the model when its Spearman(|map|) with every layer "
                             f"re-initialised falls below T, above 0 and at most 1 (default {MPRT_THRESHOLD})")
    parser.add_argument("--random-logit-seed", default=None, metavar="N",
                        help="random-logit: seeds the other class drawn (default: a new seed, said with it)")


@dataclass(frozen=True)
class Scoring:
    """The metrics asked for and every setting they take, as scored() (core.attribution.scores.faithfulness)
    takes them; `reads_baseline`: a game reads the map's baseline (the protocol's ends are not its own). `checks`:
    the sanity checks asked for (records.sanity.SANITY_CHECKS), with MPRT's mode, seed and threshold and
    random-logit's seed (a seed None: the check draws one and says it)."""

    metrics: tuple[str, ...]
    steps: int | None
    protocol: str
    road_noise: float
    road_seed: int | None
    road_percentages: tuple[float, ...]
    reads_baseline: bool
    checks: tuple[str, ...] = ()
    mprt_mode: str = MPRT_MODES[0]
    mprt_seed: int | None = None
    mprt_threshold: float = MPRT_THRESHOLD
    random_logit_seed: int | None = None

    def keywords(self) -> dict:
        """scored()'s keywords (and an AttributionRequest's fields) for the protocol and ROAD."""
        return {"protocol": self.protocol, "road_noise": self.road_noise, "road_seed": self.road_seed,
                "road_percentages": self.road_percentages}


def metric_names(text: str | None, known: tuple[str, ...] = METRICS + SANITY_CHECKS) -> tuple[str, ...]:
    """`--metrics a,b`: the names, each once, in order; a SpecError naming the known ones otherwise."""
    if not text:
        return ()
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise SpecError(f"--metrics takes {', '.join(known)} (comma-separated), not {text!r}.")
    return names


def scoring(args) -> Scoring:
    """The metrics' flags checked: an unknown metric or protocol, a bad number, and a flag no metric asked for
    uses are one line. ROAD's seed, when not given, is picked here, so every map a command scores shares it."""
    named = metric_names(args.metrics)
    metrics = tuple(m for m in named if m in METRICS)
    checks = tuple(m for m in named if m in SANITY_CHECKS)
    games, road = [m for m in metrics if m in GAMES], "road" in metrics
    rule = check_protocol(args.protocol or DEFAULT_PROTOCOL)
    if args.metric_steps is not None and args.metric_steps < 1:
        raise SpecError(f"--metric-steps must be at least 1, not {args.metric_steps}.")
    if args.protocol is not None and not games:
        raise SpecError("--protocol says how deletion and insertion are computed: add deletion or insertion to "
                        "--metrics, or leave --protocol out.")
    if args.metric_steps is not None and not games:
        raise SpecError("--metric-steps sets the deletion and insertion steps: add deletion or insertion to "
                        "--metrics, or leave --metric-steps out.")
    if args.metric_steps is not None and rule.steps is None:
        raise SpecError(f"The protocol {rule.name} fixes its steps ({rule.pixels_a_step} pixels a step): leave "
                        "--metric-steps out, or use --protocol inspector.")
    for flag, value in (("--road-noise", args.road_noise), ("--road-seed", args.road_seed),
                        ("--road-percentages", args.road_percentages)):
        if value is not None and not road:
            raise SpecError(f"{flag} is for --metrics road: add road to --metrics, or leave {flag} out.")
    noise = ROAD_NOISE if args.road_noise is None else args.road_noise
    if not noise >= 0:  # NaN too
        raise SpecError(f"--road-noise is a standard deviation, 0 or more, not {noise:g}.")
    percentages = ROAD_PERCENTAGES if args.road_percentages is None else parse_percentages(args.road_percentages)
    seed = check_seed(args.road_seed, "--road-seed")
    if road and noise > 0 and seed is None:
        seed = new_seed()
    for flag, value, check in (("--mprt", args.mprt, "mprt"), ("--mprt-seed", args.mprt_seed, "mprt"),
                               ("--mprt-threshold", args.mprt_threshold, "mprt"),
                               ("--random-logit-seed", args.random_logit_seed, "random-logit")):
        if value is not None and check not in checks:
            raise SpecError(f"{flag} is for --metrics {check}: add {check} to --metrics, or leave {flag} out.")
    mode = MPRT_MODES[0] if args.mprt is None else check_mode(args.mprt)
    threshold = MPRT_THRESHOLD if args.mprt_threshold is None else check_threshold(args.mprt_threshold)
    return Scoring(metrics, args.metric_steps, rule.name, noise, seed, tuple(percentages),
                   bool(games) and rule.takes_baseline, checks, mode,
                   check_seed(args.mprt_seed, "--mprt-seed", text=True), threshold,
                   check_seed(args.random_logit_seed, "--random-logit-seed", text=True))
