"""`network-inspector attribute`: a saliency, guided-backprop, Grad-CAM, rollout or integrated-gradients
map of one input."""

from __future__ import annotations

import sys

from inspector.core.outputs import not_the_input, output_path
from inspector.core.records.requests import ATTRIBUTION_METHODS, QUADRATURES, SMOOTH_KINDS, SMOOTHED
from inspector.core.writes import save_npy

from . import common


def add_parser(sub) -> None:
    att = sub.add_parser("attribute", help="saliency, Grad-CAM or guided backprop map to .npy or a .png overlay")
    common.model_args(att)
    att.add_argument("--method", required=True, choices=list(ATTRIBUTION_METHODS),
                     help="rollout: attention rollout across a transformer's attention modules (class-agnostic)")
    att.add_argument("--layer", default=None, help="Grad-CAM layer (default: the last conv layer; for a vision "
                                                   "transformer the last block's first norm)")
    att.add_argument("--input", required=True, help="image file, sample:NAME, or a .npy/.pt tensor")
    att.add_argument("--target", default=None, help="top1 (default for classifiers), a class index, sum, output, "
                     "or seg:CLASS[@X0,Y0,X1,Y1]")
    att.add_argument("--device", default="cpu", help="auto | cpu | cuda | cuda:N | mps")
    att.add_argument("--steps", type=int, default=50, help="ig: points on the path from the baseline (default 50)")
    att.add_argument("--quadrature", default="gausslegendre", choices=list(QUADRATURES),
                     help="ig: how the path is integrated (captum's nodes and weights; default gausslegendre)")
    att.add_argument("--batch", type=int, default=16, help="ig: path points per forward/backward pass")
    att.add_argument("--smooth", default="smoothgrad", choices=list(SMOOTH_KINDS),
                     help="smoothgrad: the mean, mean of squares or variance of the maps (default smoothgrad)")
    att.add_argument("--of", default="saliency", choices=list(SMOOTHED), help="smoothgrad: the map it smooths")
    att.add_argument("--samples", type=int, default=25, help="smoothgrad: noisy copies of the input (default 25)")
    att.add_argument("--noise", type=float, default=0.15,
                     help="smoothgrad: the noise's standard deviation as a fraction of the input's range (default 0.15)")
    att.add_argument("--noise-seed", type=int, default=None, help="smoothgrad: makes the noise repeatable")
    att.add_argument("--out", required=True,
                     help=".npy: the raw map; .png (or .jpg): a heat map over the input as the model sees it")


def run(args) -> int:
    from inspector.core import load_input, resolve_device
    from inspector.core.attribution import attribute
    from inspector.core.export import check_picture_path, picture, picture_suffixes, save_overlay

    out = not_the_input(output_path(args.out, suffixes=(".npy", *picture_suffixes())), args.input)
    if out.suffix.lower() != ".npy":
        check_picture_path(out)
    loaded = common.load(args)
    loaded.module.to(resolve_device(args.device))
    x = load_input(args.input, loaded.preprocess, loaded.input_shape)
    ig = {"steps": args.steps, "quadrature": args.quadrature, "batch": args.batch}
    options = ig if args.method == "ig" else None
    if args.method == "smoothgrad":
        options = {"of": args.of, "kind": args.smooth, "samples": args.samples, "noise": args.noise,
                   "seed": args.noise_seed, **(ig if args.of == "ig" else {})}
    found = attribute(loaded, x, args.method, args.target, args.layer, options)
    if out.suffix.lower() == ".npy":
        save_npy(out, found.map)  # the name as given (np.save would add .npy to x.NPY)
    else:
        save_overlay(out, picture(x.detach().cpu().numpy(), loaded.preprocess), found.map)
    what, index, labels = found.target, found.target_index, loaded.labels or []
    if index is not None:
        what = f"class {index}" + (f" ({labels[index]})" if index < len(labels) else "")
    print(f"{found.method} for {what}" + (f" at {found.layer}" if found.layer else "") + f" -> {out}")
    if loaded.seed is not None:
        print(common.seed_note(loaded.seed))
    if found.approximation:
        print(f"note: {found.approximation}.")
    if args.method == "smoothgrad":
        made = dict(found.details)
        print(f"{args.smooth} of {made['of']}: {made['samples']} samples, noise sigma {made['sigma']:.4g} "
              f"({made['noise']} of the input's range), noise seed {made['seed']}")
    if found.completeness_gap is not None:
        made = dict(found.details)
        print(f"completeness gap {found.completeness_gap:.4g}: sum of the map {float(found.map.sum()):.6g}, "
              f"f(x) - f(baseline) {made['f(x) - f(baseline)']:.6g} ({made['steps']} steps, {made['quadrature']})")
    for note in found.unreached:
        print(f"warning: guided rule not applied (functional call): {note}", file=sys.stderr)
    for warning in found.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0
