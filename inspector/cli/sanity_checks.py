"""`attribute --metrics mprt,random-logit`: the sanity checks of the map (inspector.core.attribution.sanity) run
beside its scores: what the command cannot take is refused before torch loads, the checks run on the map made, and
their numbers are said (each MPRT step's similarities, the verdict, the seed, mode, threshold and time; random-logit's
other class, its similarity and seed), in words or in the --json report."""

from __future__ import annotations

from inspector.core.common.errors import SpecError
from inspector.core.records.methods import class_agnostic


def refuse_early(args, checks: tuple[str, ...]) -> None:
    """What the checks cannot take, in one line before torch is imported: a class-agnostic method's random-logit,
    a detector's boxes (--each-box), a remote engine."""
    if not checks:
        return
    named = ", ".join(checks)
    if "random-logit" in checks and args.method in class_agnostic():
        raise SpecError(f"{args.method} explains no class, so there is no other class to compare it with: "
                        "random-logit needs a method that explains a class.")
    if args.each_box is not None:
        raise SpecError(f"--metrics {named} check a classifier's map; --each-box explains a detector's boxes.")
    if getattr(args, "engine", None) is not None:
        raise SpecError(f"--metrics {named} run in this process, not on --engine yet: leave --engine out.")


def run_checks(loaded, x, original, options: dict, scoring, args, progress=None) -> dict:
    """{"mprt": Randomisation, "random-logit": RandomLogit} of the checks asked for, each on the map `original`
    (made with `options`), with the command's target and layer."""
    from inspector.core.attribution.sanity.random_logit import random_logit
    from inspector.core.attribution.sanity.randomisation import mprt

    options = {k: v for k, v in options.items() if k != "progress"}  # each check says its own progress
    done = {}
    if "mprt" in scoring.checks:
        done["mprt"] = mprt(loaded, x, args.method, args.target, args.layer, options, scoring.mprt_mode,
                            scoring.mprt_seed, scoring.mprt_threshold, progress=progress, original=original)
    if "random-logit" in scoring.checks:
        done["random-logit"] = random_logit(loaded, x, args.method, args.target, args.layer, options,
                                            scoring.random_logit_seed, progress=progress, original=original)
    return done


def _seed(seed: int, drawn: bool, flag: str) -> str:
    return f"seed {seed}" + (f" (drawn: {flag} {seed} makes it again)" if drawn else "")


def _alike(s) -> str:
    ssim = "-" if s.ssim is None else f"{s.ssim:.3f}"
    return f"Spearman |map| {s.spearman_abs:.3f}, signed {s.spearman_signed:.3f}, SSIM {ssim}"


def _class(index: int, labels) -> str:
    return f"class {index}" + (f" ({labels[index]})" if labels and index < len(labels) else "")


def lines(done: dict, labels=None) -> list[str]:
    """The checks in words: MPRT's verdict with its settings, then a line per step; random-logit's line."""
    said = []
    randomised = done.get("mprt")
    if randomised is not None:
        said.append(f"mprt {randomised.mode}, {_seed(randomised.seed, randomised.seed_drawn, '--mprt-seed')}, "
                    f"threshold {randomised.threshold:g}: {randomised.verdict} ({randomised.seconds:.2f} s)")
        hows = ("",) + randomised.how
        for i, (name, how, alike) in enumerate(zip(randomised.steps, hows, randomised.similarities)):
            said.append(f"  step {i} {name}" + (f" ({how})" if how else "") + f": {_alike(alike)}")
    other = done.get("random-logit")
    if other is not None:
        said.append(f"random-logit, {_seed(other.seed, other.seed_drawn, '--random-logit-seed')}: the map of "
                    f"{_class(other.other_index, labels)} against {_class(other.target_index, labels)}'s: "
                    f"{_alike(other.similarity)} ({other.seconds:.2f} s)")
    return said


def as_json(done: dict) -> dict:
    """The checks as the --json report carries them (their as_json: everything but the maps)."""
    return {name: check.as_json() for name, check in done.items()}
