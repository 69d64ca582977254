"""`network-inspector attribute`: a saliency, guided-backprop, Grad-CAM, rollout, integrated-gradients,
SmoothGrad or occlusion map of one input, with deletion and insertion scores and JSON on request."""

from __future__ import annotations

import argparse
import sys

from inspector.core.common.errors import SpecError
from inspector.core.engine.export import SHORT_SIDE
from inspector.core.storage.outputs import not_read, output_path
from inspector.core.records.methods import METHODS, SCORES_BASELINE, SIGN_HELP, Option, made_words
from inspector.core.records.protocols import DEFAULT_PROTOCOL
from inspector.core.records.signs import SIGNS
from inspector.core.storage.writes import save_npy

from . import common, engine_args, metric_args, sanity_checks

_TYPES = {"whole": int, "number": float}


def _type_of(option: Option):
    """argparse's type for `option`: its kind's, and the word that means auto where it has one (steps auto)."""
    kind = _TYPES.get(option.kind, str)
    if not isinstance(option.auto_value, str):
        return kind

    def number_or_word(text: str):
        return text if text == option.auto_value else kind(text)
    number_or_word.__name__ = f"{kind.__name__} or {option.auto_value!r}"  # argparse names it in its error
    return number_or_word


def _method_options() -> dict[str, tuple[Option, list[str]]]:
    """Every option flag the method table has: flag -> (its first Option, the methods that take it)."""
    flags: dict[str, tuple[Option, list[str]]] = {}
    for method in METHODS.values():
        for option in method.options:
            taker = method.name + (f" ({option.when[0]} {option.when[1]})" if option.when else "")
            flags.setdefault(option.cli_flag, (option, []))[1].append(taker)
    for option in SCORES_BASELINE:  # the scores' baseline: every method's
        flags.setdefault(option.cli_flag, (option, []))[1].append("the metrics")
    return flags


class _Given(argparse.Action):
    """Stores a method option's value and notes that it was given (not its default): one the run will not use is
    said (`_check_used`)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        setattr(namespace, self.dest, values)
        namespace.given = (*namespace.given, self.dest)


def add_parser(sub) -> None:
    att = sub.add_parser("attribute", help="an attribution map (saliency, Grad-CAM, integrated gradients, ...) to .npy "
                                          "or a .png overlay, scored on request")
    common.model_args(att)
    att.add_argument("--method", required=True, choices=list(METHODS), metavar="METHOD",
                     help="; ".join(f"{m.name}: {m.help}" for m in METHODS.values()))
    att.add_argument("--layer", default=None, help="Grad-CAM layer (default: the feature map the head reads, e.g. "
                                                   "resnet's layer4; for a vision transformer the last block's "
                                                   "first norm)")
    att.add_argument("--input", required=True, help="image file, sample:NAME, or a .npy/.pt tensor")
    att.add_argument("--target", default=None, help=common.TARGET_HELP)
    att.add_argument("--device", default="cpu", help="auto | cpu | cuda | cuda:N | mps")
    for flag, (option, methods) in _method_options().items():  # the method table's options
        att.add_argument(flag, type=_type_of(option), default=option.default, action=_Given,
                         choices=list(option.choices) if option.kind == "choice" else None,
                         help=f"{', '.join(methods)}: {option.help}")
    att.set_defaults(given=())
    att.add_argument("--sign", default=None, choices=list(SIGNS), help=SIGN_HELP)
    metric_args.add(att)
    att.add_argument("--each-box", type=int, nargs="?", const=9, default=None, metavar="N",
                     help="a detector: explain each box shown (from --min-score), the best N (default 9), one map "
                          "each on its own scale: tiled in one picture, or stacked in the .npy in the boxes' order")
    att.add_argument("--min-score", type=float, default=None,
                     help="--each-box: the score boxes are explained from (default as the app shows them: 0.5, or "
                          "the best 10 when none scores 0.5)")
    att.add_argument("--json", action="store_true",
                     help="print the method, target, settings, completeness gap and metrics as one JSON object")
    att.add_argument("--out", required=True,
                     help=".npy: the raw map, its own size; .png (or .jpg): a heat map over the input as the model "
                          f"sees it, at least {SHORT_SIDE} pixels on its short side (--scale)")
    att.add_argument("--scale", type=int, default=None, metavar="K",
                     help="a picture's pixels a side per map pixel, each value a K x K block (nearest neighbour); "
                          f"default: the least that makes the short side at least {SHORT_SIDE} (a 64 x 64 map: 4); "
                          "1 keeps the map's size; a .npy keeps it always")
    engine_args.add(att)


def run(args) -> int:
    from inspector.core.records.methods import gauss_too_many

    # what can be checked without the model is checked before torch is imported (a second, not the load's ten)
    scoring = metric_args.scoring(args)
    metrics = scoring.metrics
    _check_numbers(args)
    _check_used(args, metrics, scoring.reads_baseline)
    sanity_checks.refuse_early(args, scoring.checks)
    too_many = gauss_too_many(args.quadrature, args.steps) if args.method in ("ig", "smoothgrad") else None
    if too_many and (args.method == "ig" or args.of == "ig"):
        raise SpecError(too_many)

    from inspector.core import load_input, resolve_device
    from inspector.core.attribution import attribute, parse_memory, takes_baseline
    from inspector.core.attribution.scores.baselines import make_baseline
    from inspector.core.attribution.scores.faithfulness import scored
    from inspector.core.engine.export import (
        check_picture_path,
        json_text,
        picture,
        picture_scale,
        picture_suffixes,
        save_overlay,
    )

    reads = common.files_read(args, ("--input", args.input), ("--baseline", args.baseline))
    out = not_read(output_path(args.out, suffixes=(".npy", *picture_suffixes())), reads, typed=args.out)
    if out.suffix.lower() != ".npy":
        check_picture_path(out)
    elif args.scale is not None:
        raise SpecError(f"--scale sizes a picture (.png, .jpg, ...); {out.name} keeps the map's own size.")
    cap = parse_memory(args.max_memory)
    engine_args.check(args, ("--each-box", args.each_box), ("--score-threshold", args.score_threshold))
    if args.engine is not None:
        return _attribute_remote(args, metrics, cap, out, scoring)
    loaded = common.load(args)
    loaded.module.to(resolve_device(args.device))
    x = load_input(args.input, loaded.preprocess, loaded.input_shape)
    if out.suffix.lower() != ".npy":  # a scale too large for the input's size is said before the method runs
        picture_scale(tuple(x.shape[-2:]), args.scale)
    row = METHODS[args.method]
    made = None  # the metrics' baseline for a method that has none of its own; made (and checked) first
    if scoring.reads_baseline and not takes_baseline(args.method, args.of):
        made = make_baseline(args.baseline or "zero", x, loaded.preprocess, args.blur_sigma, args.baseline_seed,
                             loaded.input_shape)
    bar = _bar(args.method, not args.json)
    options = _options(args, cap)
    if row.passes:
        options["progress"] = bar.step
    if args.each_box is not None:
        return _each_box(args, loaded, x, options, metrics, made, cap, bar, out, scoring)
    checked = {}
    try:
        found = original = attribute(loaded, x, args.method, args.target, args.layer, options)
        if metrics:
            bar.rename("metrics")
            found = scored(loaded, x, found, metrics, args.metric_steps, None if made is None else made.tensor,
                           batch=args.batch, progress=bar.step, max_memory=cap, **scoring.keywords())
        if scoring.checks:
            bar.rename(", ".join(scoring.checks))
            checked = sanity_checks.run_checks(loaded, x, original, options, scoring, args, bar.step)
    finally:
        bar.close()
    return _report(args, found, x.detach().cpu().numpy(), loaded, made.text if made is not None else None, out,
                   checked)


def _options(args, cap) -> dict:
    """The method's options as the command line set them (the table's; the scores' baseline only when named)."""
    row = METHODS[args.method]
    chosen = {o.name: getattr(args, o.dest) for o in row.options}
    if "max_memory" in chosen:
        chosen["max_memory"] = cap
    options = {name: value for name, value in chosen.items() if row.option(name).applies(chosen)}
    if args.baseline is None:  # no baseline named: the method's own ("zero"), its sigma and seed unused
        options = {k: v for k, v in options.items() if k not in _SCORES_BASELINE}
    options["sign"] = args.sign
    return options


def _attribute_remote(args, metrics: tuple[str, ...], cap, out, scoring) -> int:
    """The map made on `--engine`: the model loaded there, the input as the model reads it sent back (the
    overlay's picture), the map and its scores made there, the files written here."""
    from dataclasses import replace

    from inspector.core.attribution import takes_baseline
    from inspector.core.engine.export import picture_scale
    from inspector.core.records.requests import AttributionRequest, RunRequest
    from inspector.core.runspec import RunSpec

    options = _options(args, cap)
    if scoring.reads_baseline and not takes_baseline(args.method, args.of):  # the scores' baseline, made there
        options.update(baseline=args.baseline or "zero", blur_sigma=args.blur_sigma,
                       baseline_seed=args.baseline_seed)
    with engine_args.connect(args) as engine:
        info = engine_args.load(args, engine)
        x = engine.call("capture", RunRequest(info.request, args.input, args.device, RunSpec())).input
        if out.suffix.lower() != ".npy":  # a scale too large for the input's size is said before the method runs
            picture_scale(tuple(x.shape[-2:]), args.scale)
        found = engine.call("attribute", AttributionRequest(
            info.request, args.input, args.device, args.method, args.target or "auto", args.layer,
            options=tuple(sorted(options.items())), metrics=metrics, metric_steps=args.metric_steps,
            **scoring.keywords()))
    details = dict(found.details)
    made_text = details.get("scores' baseline is")  # the engine's words for the baseline it made
    found = replace(found, details=tuple((k, v) for k, v in found.details if k not in ("seconds",
                                                                                       "scores' baseline is")))
    return _report(args, found, x, info, made_text, out)


def _report(args, found, x, model, made_text: str | None, out, checked: dict | None = None) -> int:
    """Write the map (.npy, or the overlay on the input `x` as the model read it), then say what it is (with
    --json, as JSON). `model`: the LoadedModel here, or the ModelInfo an engine sent (preprocess, labels, seed,
    source); `checked`: the sanity checks run (sanity_checks.run_checks)."""
    from inspector.core.engine.export import json_text, picture, save_overlay

    say = (lambda text: print(text, file=sys.stderr)) if args.json else print
    if out.suffix.lower() == ".npy":
        save_npy(out, found.map)  # the name as given (np.save would add .npy to x.NPY)
    else:
        save_overlay(out, picture(x, model.preprocess), found.map,
                     detections=found.detections, chosen=found.target_detection, sign=found.shown_sign,
                     scale=args.scale)
    what, index, labels = found.target, found.target_index, model.labels or []
    if found.target_detection is not None:
        box = found.detections[found.target_detection]
        what = (f"{found.target} (detection {found.target_detection}: {box.name} {box.score:.3f} at "
                f"[{', '.join(f'{v:.1f}' for v in box.box)}])")
    elif index is not None:
        what = f"class {index}" + (f" ({labels[index]})" if index < len(labels) else "")
    say(f"{found.method} for {what}, {found.shown_sign} values" + (f" at {found.layer}" if found.layer else "")
        + f" -> {out}")
    if model.seed is not None:
        say(common.seed_note(model.source, model.seed))
    for note in found.notes:
        say(note)
    if found.approximation:
        say(f"note: {found.approximation}.")
    details = dict(found.details)
    for words in made_words(found.method, details):
        say(words)
    if found.completeness_gap is not None:
        say(f"completeness gap {found.completeness_gap:.4g}: sum of the map {float(found.map.sum()):.6g}, "
            f"f(x) - f(baseline) {details['f(x) - f(baseline)']:.6g} ({details['steps']} steps, "
            f"{details['quadrature']}" + (_auto_words(found.completeness_gap, details)
                                          if details.get("steps asked") == "auto" else "") + ")")
    baseline_text = details.get("baseline is") or made_text
    if baseline_text:
        say(f"baseline {baseline_text}")
    for curve in found.curves:
        say(f"{curve.metric} AUC {curve.auc:.4f} ({curve.said()}; {curve.score_of}; {curve.order})")
    for line in sanity_checks.lines(checked or {}, labels):
        say(line)
    if args.json:
        print(json_text({
            "method": found.method, "sign": found.shown_sign, "target": found.target,
            "target_index": found.target_index, "layer": found.layer,
            "label": labels[index] if index is not None and index < len(labels) else None,
            "out": str(out), "settings": {k: _plain(v) for k, v in found.details if k != "baseline is"},
            "baseline": baseline_text, "completeness_gap": found.completeness_gap,
            "metrics": {curve.metric: curve.as_json() for curve in found.curves},
            **({"sanity": sanity_checks.as_json(checked)} if checked else {}),
            "notes": list(found.notes), "warnings": list(found.warnings),
            **({} if found.detections is None else {"detections": [d.to_dict() for d in found.detections],
                                                    "target_detection": found.target_detection})}))
    for note in found.unreached:
        print(f"warning: guided rule not applied (functional call): {note}", file=sys.stderr)
    for warning in found.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def _each_box(args, loaded, x, options, metrics, made, cap, bar, out, scoring) -> int:
    """--each-box: the method for each box shown, tiled in one picture or stacked in the .npy; a line (and
    with --json an entry) per box."""
    import numpy as np
    from PIL import Image

    from inspector.core.attribution.per_box import caption, each_box, tiled
    from inspector.core.attribution.scores.faithfulness import scored
    from inspector.core.engine.export import json_text, picture, picture_scale
    from inspector.core.storage.writes import save_image

    try:
        maps = each_box(loaded, x, args.method, args.layer, options, args.min_score, args.each_box)
        if metrics:
            bar.rename("metrics")
            maps = [scored(loaded, x, found, metrics, args.metric_steps, None if made is None else made.tensor,
                           batch=args.batch, progress=bar.step, max_memory=cap, **scoring.keywords())
                    for found in maps]
    finally:
        bar.close()
    say = (lambda text: print(text, file=sys.stderr)) if args.json else print
    if out.suffix.lower() == ".npy":
        save_npy(out, np.stack([found.map for found in maps]))
    else:
        shown = picture(x.detach().cpu().numpy(), loaded.preprocess)
        save_image(out, Image.fromarray(tiled(shown, maps, scale=picture_scale(shown.shape, args.scale)), "RGB"))
    say(f"{maps[0].method} for each of {len(maps)} boxes" + (f" at {maps[0].layer}" if maps[0].layer else "")
        + f" -> {out}" + (f" (stacked {len(maps)} x {' x '.join(map(str, maps[0].map.shape))})"
                          if out.suffix.lower() == ".npy" else ""))
    for found in maps:
        scores = "".join(f", {c.metric} AUC {c.auc:.4f}" for c in found.curves)
        gap = f", completeness gap {found.completeness_gap:.4g}" if found.completeness_gap is not None else ""
        say(f"  {caption(found)} at [{', '.join(f'{v:.1f}' for v in found.detections[found.target_detection].box)}]"
            f"{gap}{scores}")
    for curve in maps[0].curves:  # the settings every box's scores share
        say(f"{curve.metric}: {curve.said()}; {curve.order}")
    if loaded.seed is not None:
        say(common.seed_note(loaded.source, loaded.seed))
    if args.json:
        first = maps[0]
        print(json_text({
            "method": first.method, "sign": first.shown_sign, "layer": first.layer, "out": str(out),
            "settings": {k: _plain(v) for k, v in first.details if k != "baseline is"},
            "boxes": [{"target": found.target, "target_detection": found.target_detection,
                       "completeness_gap": found.completeness_gap,
                       "metrics": {curve.metric: curve.as_json() for curve in found.curves}} for found in maps],
            "detections": [d.to_dict() for d in first.detections]}))
    for warning in dict.fromkeys(w for found in maps for w in found.warnings):
        print(f"warning: {warning}", file=sys.stderr)
    return 0


_SCORES_BASELINE = frozenset(o.name for o in SCORES_BASELINE)


def _check_numbers(args) -> None:
    """Bad numbers are one line, before any model work."""
    checks = (("--steps", args.steps, 1), ("--batch", args.batch, 1), ("--samples", args.samples, 1), ("--scale", args.scale, 1),
              ("--window", args.window, 1), ("--stride", args.stride, 1),
              ("--masks", args.masks, 1), ("--cell", args.cell, 1))
    for flag, value, least in checks:
        if value is not None and not isinstance(value, str) and value < least:
            raise SpecError(f"{flag} must be at least {least}, not {value}.")
    if args.each_box is not None and args.each_box < 1:
        raise SpecError(f"--each-box explains the best N boxes, N at least 1, not {args.each_box}.")
    if args.each_box is not None and args.target is not None:
        raise SpecError("--each-box explains every box shown, each as its own target: leave out --target.")
    if args.min_score is not None and args.each_box is None:
        raise SpecError("--min-score chooses the boxes --each-box explains; add --each-box.")
    if not args.noise >= 0:
        raise SpecError(f"--noise is a fraction of the input's range, 0 or more, not {args.noise}.")
    if args.blur_sigma is not None and not args.blur_sigma > 0:
        raise SpecError(f"--blur-sigma is a number of pixels above 0, not {args.blur_sigma}.")


def _auto_words(gap: float, details: dict) -> str:
    """How steps auto ended: within the tolerance, or at --max-steps before it (the note says the levels)."""
    within = f"a gap within {details['tolerance']:g} of |f(x) - f(baseline)|"
    if gap <= details["tolerance"] * abs(details["f(x) - f(baseline)"]):
        return f", chosen for {within}"
    return f", stopped by --max-steps {details['max_steps']} before {within}"


def _check_used(args, metrics: tuple[str, ...], reads_baseline: bool) -> None:
    """A method option given that this run would not use is refused, saying what takes it: one of another method,
    one whose condition is unmet (--tolerance without --steps auto, --steps on smoothgrad without --of ig), a
    scores' option (--baseline, --batch, --max-memory, ...) given to a method that has none without --metrics, and
    a scores' baseline no metric reads (`reads_baseline` false: road alone, or a protocol that fixes its own)."""
    row = METHODS[args.method]
    chosen = {o.name: getattr(args, o.dest) for o in row.options}
    for flag, (option, takers) in _method_options().items():
        if option.dest not in args.given:
            continue
        own = next((o for o in row.options if o.cli_flag == flag), None)
        if own is not None and not own.applies(chosen):
            condition = f"{row.option(own.when[0]).cli_flag} {own.when[1]}"
            raise SpecError(f"{flag} applies to {args.method} with {condition} only: add {condition}, or leave "
                            f"{flag} out.")
        scores = option.name in _SCORES_BASELINE or option.name in ("batch", "max_memory")
        if own is None and not (scores and metrics):
            raise SpecError(f"{args.method} takes no {flag}{' without --metrics' if scores else ''}; {flag} is for "
                            f"{', '.join(takers)}.")
        if own is None and option.name in _SCORES_BASELINE and not reads_baseline:
            raise SpecError(f"{args.method} takes no {flag} here: {', '.join(metrics)} read no baseline under "
                            f"--protocol {args.protocol or DEFAULT_PROTOCOL}.")


def _plain(value):
    """A JSON-ready value (numpy numbers to Python's)."""
    return value.item() if hasattr(value, "item") else value


class _bar:
    """A tqdm bar on stderr for the methods that run in steps (only on a terminal, and not with --json)."""

    def __init__(self, what: str, show: bool) -> None:
        from tqdm import tqdm

        self.bar = tqdm(desc=what, unit="pass", file=sys.stderr, dynamic_ncols=True, disable=None if show else True,
                        leave=False)

    def step(self, done: int, total: int) -> None:
        if self.bar.total != total:
            self.bar.reset(total=total)
        self.bar.n = done
        self.bar.refresh()

    def rename(self, what: str) -> None:
        self.bar.set_description(what)

    def close(self) -> None:
        self.bar.close()
