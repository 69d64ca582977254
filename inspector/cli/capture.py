"""`network-inspector capture`: one run with hooks, its captures to a .npz (a folder of images: one per image)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from inspector.core.common.errors import SpecError
from inspector.core.storage.outputs import make_parent, not_read, output_path
from inspector.core.records.manifest import SOURCE_FIELDS, run_manifest

from . import capture_folder, common, engine_args


def add_parser(sub) -> None:
    cap = sub.add_parser("capture", help="capture activations and gradients to .npz")
    common.model_args(cap)
    cap.add_argument("--input", help="image file, sample:NAME, a .npy/.pt tensor, or a folder or glob of images "
                                     "(then --out is a folder: OUT/<relative path>.npz per image + manifest.json)")
    cap.add_argument("--layers", default="all", help="paths or globs, comma-separated; all; type:Conv2d")
    cap.add_argument("--sites", default="output,grad_output",
                     help="any of input, output, grad_output, grad_input, params, attention (attention "
                          "modules: softmax probabilities per head)")
    cap.add_argument("--edit", action="append", default=[], metavar="KEY=OP(ARGS)",
                     help="e.g. relu1:grad_input=clamp(min=0); repeatable, applied in order")
    cap.add_argument("--target", default=None, help=common.TARGET_HELP)
    cap.add_argument("--device", default="cpu", help="auto | cpu | cuda | cuda:N | mps")
    cap.add_argument("--input-grad", action="store_true", help="also capture the gradient w.r.t. the input")
    cap.add_argument("--out", help="write arrays to this .npz")
    cap.add_argument("--json", action="store_true", help="print statistics, predictions and timings as JSON")
    cap.add_argument("--session", help="replay a saved *.inspector.json session (model, input, layers, edits...)")
    cap.add_argument("--manifest", action="store_true",
                     help="with --out, also write OUT.json: model, weights, seed, input, device, target, edits, "
                          "versions and the keys with their shapes")
    engine_args.add(cap)


def _capture_out(args) -> Path | None:
    """The .npz `capture` writes (and its manifest beside it), checked before anything runs."""
    if not args.out:
        if args.manifest:
            raise SpecError("--manifest is written beside the .npz: add --out FILE.npz.")
        return None
    reads = common.files_read(args, ("--session", getattr(args, "session", None)), ("--input", args.input))
    out = not_read(output_path(args.out, ".npz"), reads, typed=args.out if args.out.endswith(".npz") else None)
    if args.manifest:
        not_read(output_path(out.with_suffix(".json"), flag="--manifest"), reads, flag="--manifest")
    return out


def run(args) -> int:
    from inspector.core.edits import parse_edit
    from inspector.core.common.keys import parse_sites

    parse_sites(args.sites)  # what needs no model is said before torch is imported (a second, not the load's ten)
    for text in args.edit:
        parse_edit(text)

    engine_args.check(args, ("--session", args.session), ("--score-threshold", args.score_threshold))
    if args.engine is not None:
        return _capture_remote(args)

    from inspector.core.inputs.image_sets import is_image_set  # torch-free: --out is checked before torch loads

    if args.input and not args.session and is_image_set(args.input):
        out_dir = capture_folder.check_out(args)  # before the model loads
        return capture_folder.capture_folder(args, common.load(args), out_dir)
    out = _capture_out(args)

    from inspector.core import capture, load_input

    if args.session:
        return _replay_session(args, out)
    if not args.input:
        raise SpecError("capture needs --input (an image, sample:NAME, or a .npy/.pt tensor).")
    loaded = common.load(args)
    x = load_input(args.input, loaded.preprocess, loaded.input_shape)
    result = capture(loaded, x, args.layers, args.sites, args.edit, args.target, args.device, args.input_grad)
    _report(args, result, run_manifest(args.model, loaded.weights, loaded.seed, args.input),
            out)
    return 0


def _capture_remote(args) -> int:
    """The capture run on `--engine`: the model loaded there, the layers chosen from its tree here (the same
    rule as a local run), every array and statistic sent back, the files written here."""
    from inspector.core.records.requests import RunRequest
    from inspector.core.runspec import RunSpec

    if not args.input:
        raise SpecError("capture needs --input (an image, sample:NAME, or a .npy/.pt tensor).")
    out = _capture_out(args)
    with engine_args.connect(args) as engine:
        info = engine_args.load(args, engine)
        spec = RunSpec.make((), args.sites, args.edit, args.target, args.input_grad)
        layers = tuple(info.tree.select(args.layers, params="params" in spec.sites))
        from dataclasses import replace

        result = engine.call("capture", RunRequest(info.request, args.input, args.device, replace(spec, layers=layers)))
    _report(args, result, run_manifest(args.model, info.weights, info.seed, args.input), out)
    return 0


def _replay_session(args, out: Path | None) -> int:
    from dataclasses import replace

    from inspector.core.session.file import load_session
    from inspector.core.workbench import Workbench

    session = load_session(args.session, trust=args.trust)
    for path, flag in ((out, "--out"), (out.with_suffix(".json") if out and args.manifest else None, "--manifest")):
        if path is not None:  # nor what the session reads
            not_read(path, (("session's input", session.input), ("session's weights", session.weights)), flag)
    if args.seed is not None:  # --seed wins over the session's seed
        session = replace(session, seed=common.seed(args))
    bench = Workbench()
    outcome = bench.execute(session.run_request(trust=args.trust))
    _report(args, outcome.result, run_manifest(session.model, session.weights, bench.loaded.seed, session.input,
                                               session=str(args.session)), out)
    return 0


def _report(args, result, manifest: dict, out: Path | None) -> None:
    """Write the .npz `out` (and with --manifest its JSON), then print predictions or --json statistics
    (valid JSON: NaN and infinities as the strings "NaN", "Infinity", "-Infinity")."""
    if out is not None:
        make_parent(out)
        if args.manifest:
            from inspector.core.engine.export import export_npz

            export_npz(result, out, manifest)
        else:
            result.save_npz(out)
    if args.json:
        from inspector.core.engine.export import json_ready

        print(json.dumps(json_ready({**{k: manifest.get(k) for k in SOURCE_FIELDS},
                                     **result.summary()}), indent=1, allow_nan=False))
    else:
        for p in result.predictions:
            print(f"{p.probability:7.2%}  {p.label} (class {p.index})")
        for line in common.detection_lines(result):
            print(line)
        if manifest.get("seed") is not None:
            print(common.seed_note(manifest["model"], manifest["seed"]))
        print(f"{len(result.captures)} captures, target {result.target}, "
              f"{result.timings.get('total_s', 0) * 1000:.0f} ms" + (f" -> {out}" if out is not None else ""))
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
