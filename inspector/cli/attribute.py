"""`network-inspector attribute`: a saliency, guided-backprop, Grad-CAM, rollout, integrated-gradients,
SmoothGrad or occlusion map of one input, with deletion and insertion scores and JSON on request."""

from __future__ import annotations

import json
import sys

from inspector.core.errors import SpecError
from inspector.core.outputs import not_the_input, output_path
from inspector.core.records.requests import ATTRIBUTION_METHODS, QUADRATURES, SMOOTH_KINDS, SMOOTHED
from inspector.core.records.signs import SIGNS
from inspector.core.writes import save_npy

from . import common


def add_parser(sub) -> None:
    att = sub.add_parser("attribute", help="saliency, Grad-CAM or guided backprop map to .npy or a .png overlay")
    common.model_args(att)
    att.add_argument("--method", required=True, choices=list(ATTRIBUTION_METHODS),
                     help="rollout: attention rollout across a transformer's attention modules (class-agnostic)")
    att.add_argument("--layer", default=None, help="Grad-CAM layer (default: the feature map the head reads, e.g. "
                                                   "resnet's layer4; for a vision transformer the last block's "
                                                   "first norm)")
    att.add_argument("--input", required=True, help="image file, sample:NAME, or a .npy/.pt tensor")
    att.add_argument("--target", default=None, help=common.TARGET_HELP)
    att.add_argument("--device", default="cpu", help="auto | cpu | cuda | cuda:N | mps")
    att.add_argument("--steps", type=int, default=50, help="ig: points on the path from the baseline (default 50)")
    att.add_argument("--quadrature", default="gausslegendre", choices=list(QUADRATURES),
                     help="ig: how the path is integrated (captum's nodes and weights; default gausslegendre)")
    att.add_argument("--batch", type=int, default=None,
                     help="ig, occlusion and the metrics: copies of the input a pass (default: as many as half the "
                          "free memory holds, measured on one copy, at most 64)")
    att.add_argument("--max-memory", default=None,
                     help="the most memory a pass may take, e.g. 2GB (default: half of what is free)")
    att.add_argument("--smooth", default="smoothgrad", choices=list(SMOOTH_KINDS),
                     help="smoothgrad: the mean, mean of squares or variance of the maps (default smoothgrad)")
    att.add_argument("--of", default="saliency", choices=list(SMOOTHED), help="smoothgrad: the map it smooths")
    att.add_argument("--samples", type=int, default=25, help="smoothgrad: noisy copies of the input (default 25)")
    att.add_argument("--noise", type=float, default=0.15,
                     help="smoothgrad: the noise's standard deviation as a fraction of the input's range (default 0.15)")
    att.add_argument("--noise-seed", type=int, default=None, help="smoothgrad: makes the noise repeatable")
    att.add_argument("--window", type=int, default=None,
                     help="occlusion: the window's side in pixels (default a tenth of the input's side)")
    att.add_argument("--stride", type=int, default=None, help="occlusion: pixels between windows (default window/2)")
    att.add_argument("--masks", type=int, default=500, help="drise: random masks (default 500)")
    att.add_argument("--cell", type=int, default=None,
                     help="drise: a mask cell's side in pixels (default a sixteenth of the input's side)")
    att.add_argument("--probability", type=float, default=0.5,
                     help="drise: the chance a mask cell keeps the image (default 0.5)")
    att.add_argument("--mask-seed", type=int, default=None, help="drise: makes the masks repeatable")
    att.add_argument("--baseline", default=None,
                     help="ig, occlusion and the metrics: zero (default), mean, black, white, blur, uniform, or an "
                          "image or tensor file of the input's size")
    att.add_argument("--blur-sigma", type=float, default=None,
                     help="--baseline blur: the blur's sigma in pixels (default a twentieth of the input's side)")
    att.add_argument("--baseline-seed", type=int, default=None, help="--baseline uniform: makes the noise repeatable")
    att.add_argument("--sign", default=None, choices=list(SIGNS),
                     help="what of the map is drawn and scored: positive, negative or absolute values, or signed "
                          "(a diverging picture; the metrics remove the most positive pixels first). Default: signed "
                          "for ig, occlusion and guided maps (and SmoothGrad's mean of them), positive for the rest")
    att.add_argument("--metrics", default=None,
                     help="faithfulness scores of the map, comma-separated: deletion, insertion")
    att.add_argument("--metric-steps", type=int, default=50, help="the metrics' steps K (default 50)")
    att.add_argument("--each-box", type=int, nargs="?", const=9, default=None, metavar="N",
                     help="a detector: explain each box shown (from --min-score), the best N (default 9), one map "
                          "each on its own scale: tiled in one picture, or stacked in the .npy in the boxes' order")
    att.add_argument("--min-score", type=float, default=None,
                     help="--each-box: the score boxes are explained from (default as the app shows them: 0.5, or "
                          "the best 10 when none scores 0.5)")
    att.add_argument("--json", action="store_true",
                     help="print the method, target, settings, completeness gap and metrics as one JSON object")
    att.add_argument("--out", required=True,
                     help=".npy: the raw map; .png (or .jpg): a heat map over the input as the model sees it")


def run(args) -> int:
    from inspector.core import load_input, resolve_device
    from inspector.core.attribution import BASELINE_METHODS, attribute
    from inspector.core.baselines import make_baseline
    from inspector.core.batching import parse_memory
    from inspector.core.export import check_picture_path, picture, picture_suffixes, save_overlay
    from inspector.core.faithfulness import METRICS, scored

    out = not_the_input(output_path(args.out, suffixes=(".npy", *picture_suffixes())), args.input)
    if out.suffix.lower() != ".npy":
        check_picture_path(out)
    metrics = _metrics(args.metrics, METRICS)
    _check_numbers(args)
    cap = parse_memory(args.max_memory)
    loaded = common.load(args)
    loaded.module.to(resolve_device(args.device))
    x = load_input(args.input, loaded.preprocess, loaded.input_shape)
    base = {"baseline": args.baseline, "blur_sigma": args.blur_sigma, "baseline_seed": args.baseline_seed} \
        if args.baseline is not None else {}
    uses_baseline = args.method in BASELINE_METHODS or (args.method == "smoothgrad" and args.of == "ig")
    made = None  # the metrics' baseline for a method that has none of its own; made (and checked) first
    if metrics and not uses_baseline:
        made = make_baseline(args.baseline or "zero", x, loaded.preprocess, args.blur_sigma, args.baseline_seed,
                             loaded.input_shape)
    bar = _bar(args.method, not args.json)
    ig = {"steps": args.steps, "quadrature": args.quadrature, "batch": args.batch, "max_memory": cap}
    options = {"ig": {**ig, **base, "progress": bar.step},
               "occlusion": {"window": args.window, "stride": args.stride, "batch": args.batch, "max_memory": cap,
                             **base,
                             "progress": bar.step}}.get(args.method)
    if args.method == "drise":
        options = {"masks": args.masks, "cell": args.cell, "probability": args.probability, "seed": args.mask_seed,
                   "batch": args.batch, "max_memory": cap, "progress": bar.step}
    if args.method == "smoothgrad":
        options = {"of": args.of, "kind": args.smooth, "samples": args.samples, "noise": args.noise,
                   "seed": args.noise_seed, "progress": bar.step, **({**ig, **base} if args.of == "ig" else {})}
    options = {**(options or {}), "sign": args.sign}
    if args.each_box is not None:
        return _each_box(args, loaded, x, options, metrics, made, cap, bar, out)
    try:
        found = attribute(loaded, x, args.method, args.target, args.layer, options)
        if metrics:
            bar.rename("metrics")
            found = scored(loaded, x, found, metrics, args.metric_steps, None if made is None else made.tensor,
                           batch=args.batch, progress=bar.step, max_memory=cap)
    finally:
        bar.close()
    say = (lambda text: print(text, file=sys.stderr)) if args.json else print
    if out.suffix.lower() == ".npy":
        save_npy(out, found.map)  # the name as given (np.save would add .npy to x.NPY)
    else:
        save_overlay(out, picture(x.detach().cpu().numpy(), loaded.preprocess), found.map,
                     detections=found.detections, chosen=found.target_detection, sign=found.shown_sign)
    what, index, labels = found.target, found.target_index, loaded.labels or []
    if found.target_detection is not None:
        box = found.detections[found.target_detection]
        what = (f"{found.target} (detection {found.target_detection}: {box.name} {box.score:.3f} at "
                f"[{', '.join(f'{v:.1f}' for v in box.box)}])")
    elif index is not None:
        what = f"class {index}" + (f" ({labels[index]})" if index < len(labels) else "")
    say(f"{found.method} for {what}" + (f" at {found.layer}" if found.layer else "") + f" -> {out}"
        + f" ({found.shown_sign} values)")
    if loaded.seed is not None:
        say(common.seed_note(loaded.seed))
    for note in found.notes:
        say(note)
    if found.approximation:
        say(f"note: {found.approximation}.")
    details = dict(found.details)
    if args.method == "smoothgrad":
        say(f"{args.smooth} of {details['of']}: {details['samples']} samples, noise sigma {details['sigma']:.4g} "
            f"({details['noise']} of the input's range), noise seed {details['seed']}")
    if args.method == "occlusion":
        say(f"occlusion: {details['windows']} windows of {details['window']} pixels, stride {details['stride']}")
    if args.method == "drise":
        say(f"drise: {details['masks']} masks of {details['cell']}-pixel cells kept with probability "
            f"{details['probability']:g}, mask seed {details['seed']}")
    if found.completeness_gap is not None:
        say(f"completeness gap {found.completeness_gap:.4g}: sum of the map {float(found.map.sum()):.6g}, "
            f"f(x) - f(baseline) {details['f(x) - f(baseline)']:.6g} ({details['steps']} steps, "
            f"{details['quadrature']})")
    baseline_text = details.get("baseline is") or (made.text if made is not None else None)
    if baseline_text:
        say(f"baseline {baseline_text}")
    for curve in found.curves:
        say(f"{curve.metric} AUC {curve.auc:.4f} ({args.metric_steps} steps, {curve.score_of}; {curve.order})")
    if args.json:
        print(json.dumps({
            "method": found.method, "sign": found.shown_sign, "target": found.target,
            "target_index": found.target_index, "layer": found.layer,
            "label": labels[index] if index is not None and index < len(labels) else None,
            "out": str(out), "settings": {k: _plain(v) for k, v in found.details if k != "baseline is"},
            "baseline": baseline_text, "completeness_gap": found.completeness_gap,
            "metrics": {curve.metric: curve.as_json() for curve in found.curves},
            "notes": list(found.notes), "warnings": list(found.warnings),
            **({} if found.detections is None else {"detections": [d.to_dict() for d in found.detections],
                                                    "target_detection": found.target_detection})}))
    for note in found.unreached:
        print(f"warning: guided rule not applied (functional call): {note}", file=sys.stderr)
    for warning in found.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def _each_box(args, loaded, x, options, metrics, made, cap, bar, out) -> int:
    """--each-box: the method for each box shown, tiled in one picture or stacked in the .npy; a line (and
    with --json an entry) per box."""
    import numpy as np
    from PIL import Image

    from inspector.core.export import picture
    from inspector.core.faithfulness import scored
    from inspector.core.per_box import caption, each_box, tiled
    from inspector.core.writes import save_image

    try:
        maps = each_box(loaded, x, args.method, args.layer, options, args.min_score, args.each_box)
        if metrics:
            bar.rename("metrics")
            maps = [scored(loaded, x, found, metrics, args.metric_steps, None if made is None else made.tensor,
                           batch=args.batch, progress=bar.step, max_memory=cap) for found in maps]
    finally:
        bar.close()
    say = (lambda text: print(text, file=sys.stderr)) if args.json else print
    if out.suffix.lower() == ".npy":
        save_npy(out, np.stack([found.map for found in maps]))
    else:
        save_image(out, Image.fromarray(tiled(picture(x.detach().cpu().numpy(), loaded.preprocess), maps), "RGB"))
    say(f"{maps[0].method} for each of {len(maps)} boxes" + (f" at {maps[0].layer}" if maps[0].layer else "")
        + f" -> {out}" + (f" (stacked {len(maps)} x {' x '.join(map(str, maps[0].map.shape))})"
                          if out.suffix.lower() == ".npy" else ""))
    for found in maps:
        scores = "".join(f", {c.metric} AUC {c.auc:.4f}" for c in found.curves)
        gap = f", completeness gap {found.completeness_gap:.4g}" if found.completeness_gap is not None else ""
        say(f"  {caption(found)} at [{', '.join(f'{v:.1f}' for v in found.detections[found.target_detection].box)}]"
            f"{gap}{scores}")
    if loaded.seed is not None:
        say(common.seed_note(loaded.seed))
    if args.json:
        first = maps[0]
        print(json.dumps({
            "method": first.method, "sign": first.shown_sign, "layer": first.layer, "out": str(out),
            "settings": {k: _plain(v) for k, v in first.details if k != "baseline is"},
            "boxes": [{"target": found.target, "target_detection": found.target_detection,
                       "completeness_gap": found.completeness_gap,
                       "metrics": {curve.metric: curve.as_json() for curve in found.curves}} for found in maps],
            "detections": [d.to_dict() for d in first.detections]}))
    for warning in dict.fromkeys(w for found in maps for w in found.warnings):
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def _metrics(text: str | None, known: tuple[str, ...]) -> tuple[str, ...]:
    if not text:
        return ()
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise SpecError(f"--metrics takes {', '.join(known)} (comma-separated), not {text!r}.")
    return names


def _check_numbers(args) -> None:
    """Bad numbers are one line, before any model work."""
    checks = (("--steps", args.steps, 1), ("--batch", args.batch, 1), ("--samples", args.samples, 1),
              ("--metric-steps", args.metric_steps, 1), ("--window", args.window, 1), ("--stride", args.stride, 1),
              ("--masks", args.masks, 1), ("--cell", args.cell, 1))
    for flag, value, least in checks:
        if value is not None and value < least:
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
