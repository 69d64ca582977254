"""`network-inspector`: the app with no arguments; headless commands otherwise.

Errors are printed as one clear line (a traceback only with --debug) and exit non-zero.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from inspector.core.records.requests import ATTRIBUTION_METHODS

from . import atlas, diff
from .common import load as _load
from .common import seed as _seed
from .common import seed_note as _seed_note

CODE_WARNING = (
    "file.py:Name and package.module:Name run that Python code; TorchScript and .pt2 files, "
    "and hf: folders with pickled weights or code of their own, can also carry code and need --trust."
)


def _model_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default="demo",
                        help="demo, a torchvision name (resnet18), timm:NAME (any timm model, e.g. "
                             "timm:vit_small_patch16_224), hf:PATH_OR_ID[#OUTPUT] (a transformers save_pretrained "
                             "folder or an id in the local Hugging Face cache; #OUTPUT picks the output read "
                             "instead of logits), file.py:Name, package.module:Name, "
                             "a TorchScript file or a .pt2 program. " + CODE_WARNING)
    parser.add_argument("--weights", default=None,
                        help="random | pretrained | PATH (.safetensors or a weights-only checkpoint). timm's "
                             "pretrained weights are read from the local Hugging Face cache (HF_HUB_CACHE); "
                             "hf: sources default to the folder's own weights (pretrained)")
    parser.add_argument("--trust", action="store_true",
                        help="allow loading files that can run code (TorchScript, .pt2, pickled models, an hf: "
                             "folder's pickled .bin weights or its own code, trust_remote_code)")
    parser.add_argument("--seed", default=None, metavar="N",
                        help="seed for random weights (torchvision, timm and hf: --weights random, file.py:Name, "
                             "package.module:Name), 0 to 4294967295; the same seed gives the same weights "
                             "here, in the app and in session files. Default: a new seed, printed")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="network-inspector",
        description="See inside a PyTorch network. With no command, opens the desktop app.",
        epilog=CODE_WARNING,
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    parser.add_argument("--self-test", action="store_true",
                        help="check this install offline and exit (0: all passed); --self-test --json FILE "
                             "also writes a report")
    sub = parser.add_subparsers(dest="command")

    layers = sub.add_parser("layers", help="list the module tree")
    _model_args(layers)
    layers.add_argument("--json", action="store_true", help="print JSON")

    cap = sub.add_parser("capture", help="capture activations and gradients to .npz")
    _model_args(cap)
    cap.add_argument("--input", help="image file, sample:NAME, a .npy/.pt tensor, or a folder or glob of images "
                                     "(then --out is a folder: OUT/<relative path>.npz per image + manifest.json)")
    cap.add_argument("--layers", default="all", help="paths or globs, comma-separated; all; type:Conv2d")
    cap.add_argument("--sites", default="output,grad_output",
                     help="any of input, output, grad_output, grad_input, params, attention (attention "
                          "modules: softmax probabilities per head)")
    cap.add_argument("--edit", action="append", default=[], metavar="KEY=OP(ARGS)",
                     help="e.g. relu1:grad_input=clamp(min=0); repeatable, applied in order")
    cap.add_argument("--target", default=None, help="top1 (classifiers), a class index, sum, output, or "
                     "seg:CLASS[@X0,Y0,X1,Y1] (segmentation: that class's logits over all pixels or a box)")
    cap.add_argument("--device", default="cpu", help="auto | cpu | cuda | cuda:N | mps")
    cap.add_argument("--input-grad", action="store_true", help="also capture the gradient w.r.t. the input")
    cap.add_argument("--out", help="write arrays to this .npz")
    cap.add_argument("--json", action="store_true", help="print statistics, predictions and timings as JSON")
    cap.add_argument("--session", help="replay a saved *.inspector.json session (model, input, layers, edits...)")
    cap.add_argument("--manifest", action="store_true",
                     help="with --out, also write OUT.json: model, weights, seed, input, device, target, edits, "
                          "versions and the keys with their shapes")

    att = sub.add_parser("attribute", help="saliency, Grad-CAM or guided backprop map to .npy or a .png overlay")
    _model_args(att)
    att.add_argument("--method", required=True, choices=list(ATTRIBUTION_METHODS),
                     help="rollout: attention rollout across a transformer's attention modules (class-agnostic)")
    att.add_argument("--layer", default=None, help="Grad-CAM layer (default: the last conv layer; for a vision "
                                                   "transformer the last block's first norm)")
    att.add_argument("--input", required=True, help="image file, sample:NAME, or a .npy/.pt tensor")
    att.add_argument("--target", default=None, help="top1 (default for classifiers), a class index, sum, output, "
                     "or seg:CLASS[@X0,Y0,X1,Y1]")
    att.add_argument("--device", default="cpu", help="auto | cpu | cuda | cuda:N | mps")
    att.add_argument("--out", required=True,
                     help=".npy: the raw map; .png (or .jpg): a heat map over the input as the model sees it")

    bench = sub.add_parser("bench", help="measure the engine against plain forward + backward")
    bench.add_argument("--models", nargs="+", default=["resnet50", "vgg16", "convnext_tiny", "vit_b_16"])
    bench.add_argument("--repeats", type=int, default=5)
    bench.add_argument("--device", default="cpu")
    bench.add_argument("--json", help="also write the rows to this JSON file")
    bench.add_argument("--gui", action="store_true",
                       help="measure the desktop app instead (GUI stalls, run-to-drawn, layer switch, "
                            "mosaic paint, toggle queueing); offscreen without a display")
    bench.add_argument("--model", default="resnet18", help="with --gui: the model for the run and switch figures; "
                                                           "with --atlas: the model")
    bench.add_argument("--diff", action="store_true",
                       help="measure `diff` instead: one diff run against one engine run of the same capture")
    bench.add_argument("--video", action="store_true",
                       help="with --gui: play a video through the app instead (frames -> panels per second "
                            "against plain forward + backward, GUI stalls, memory over 1,000 frames)")
    bench.add_argument("--atlas", action="store_true",
                       help="measure the channel atlas (every conv layer) against plain batched inference")
    bench.add_argument("--images", type=int, default=64, help="with --atlas: images in the generated folder")
    bench.add_argument("--batch", type=int, default=16, help="with --atlas: batch size")

    sweep = sub.add_parser("sweep", help="load many models (random weights) and capture output and grad_output "
                                         "of every leaf: which ones work, and how long each takes")
    sweep.add_argument("--models", nargs="+", default=None,
                       help="sources to try (default: every torchvision classification and segmentation model "
                            "and 40 timm models across families)")
    sweep.add_argument("--device", default="cpu")
    sweep.add_argument("--hf", action="store_true",
                       help="sweep transformers image models across families instead (default-size configs "
                            "loaded as hf: folders with random weights)")
    sweep.add_argument("--json", help="also write the rows to this JSON file")

    sub.add_parser("samples", help="list the bundled sample inputs")

    diff.add_parser(sub, _model_args)
    atlas.add_parser(sub, _model_args)
    return parser


def main(argv: list[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if "--self-test" in args_list[: _first_command(args_list)]:
        from inspector.selftest import main as self_test

        return self_test(args_list)
    parser = build_parser()
    args = parser.parse_args(argv)
    from inspector.core.allocator import keep_freed_memory

    keep_freed_memory()
    if args.command is None:
        return _launch_app(parser)
    from inspector.core.errors import InspectorError

    try:
        return COMMANDS[args.command](args)
    except InspectorError as exc:
        if args.debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _first_command(args: list[str]) -> int:
    """Index of the first subcommand in `args` (len(args) when there is none)."""
    return next((i for i, a in enumerate(args) if a in COMMANDS), len(args))


def _launch_app(parser: argparse.ArgumentParser) -> int:
    try:
        from inspector.gui.app import run_app
    except ImportError:
        parser.print_help()
        return 0
    return run_app()


def cmd_layers(args) -> int:
    from inspector.core import layer_tree

    loaded = _load(args)
    tree = layer_tree(loaded)
    if args.json:
        print(json.dumps([l.to_dict() for l in tree], indent=1))
        return 0
    print(f"{'path':<40}{'type':<24}{'params':>12}  {'calls':>5}  output")
    for layer in tree:
        shapes = ", ".join("x".join(map(str, s)) for s in layer.output_shapes)
        name = "  " * max(layer.depth - 1, 0) + (layer.path or "(model)")
        print(f"{name:<40}{layer.type_name:<24}{layer.parameters:>12,}  {layer.calls:>5}  {shapes}")
    if loaded.seed is not None:
        print(_seed_note(loaded.seed))
    return 0


def _capture_out(args) -> Path | None:
    """The .npz `capture` writes (and its manifest beside it), checked before anything runs."""
    from inspector.core.errors import SpecError
    from inspector.core.outputs import output_path

    if not args.out:
        if args.manifest:
            raise SpecError("--manifest is written beside the .npz: add --out FILE.npz.")
        return None
    out = output_path(args.out, ".npz")
    if args.manifest:
        output_path(out.with_suffix(".json"), flag="--manifest")
    return out


def cmd_capture(args) -> int:
    from inspector.core import SpecError, capture, load_input

    out = _capture_out(args)
    if args.session:
        return _replay_session(args, out)
    if not args.input:
        raise SpecError("capture needs --input (an image, sample:NAME, or a .npy/.pt tensor).")
    loaded = _load(args)
    from inspector.core.inputs.files import is_image_set

    if is_image_set(args.input):
        from .capture_folder import capture_folder

        return capture_folder(args, loaded)
    x = load_input(args.input, loaded.preprocess, loaded.input_shape)
    result = capture(loaded, x, args.layers, args.sites, args.edit, args.target, args.device, args.input_grad)
    _report(args, result, {"model": args.model, "weights": loaded.weights, "seed": loaded.seed, "input": args.input},
            out)
    return 0


def cmd_attribute(args) -> int:
    import numpy as np

    from inspector.core import load_input, resolve_device
    from inspector.core.attribution import attribute
    from inspector.core.export import check_picture_path, picture, picture_suffixes, save_overlay
    from inspector.core.outputs import make_parent, output_path

    out = output_path(args.out, suffixes=(".npy", *picture_suffixes()))
    if out.suffix.lower() != ".npy":
        check_picture_path(out)
    loaded = _load(args)
    loaded.module.to(resolve_device(args.device))
    x = load_input(args.input, loaded.preprocess, loaded.input_shape)
    found = attribute(loaded, x, args.method, args.target, args.layer)
    if out.suffix.lower() == ".npy":
        with open(make_parent(out), "wb") as file:  # the name as given (np.save would add .npy to x.NPY)
            np.save(file, found.map)
    else:
        save_overlay(out, picture(x.detach().cpu().numpy(), loaded.preprocess), found.map)
    what, index, labels = found.target, found.target_index, loaded.labels or []
    if index is not None:
        what = f"class {index}" + (f" ({labels[index]})" if index < len(labels) else "")
    print(f"{found.method} for {what}" + (f" at {found.layer}" if found.layer else "") + f" -> {out}")
    if loaded.seed is not None:
        print(_seed_note(loaded.seed))
    for note in found.unreached:
        print(f"warning: guided rule not applied (functional call): {note}", file=sys.stderr)
    for warning in found.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def _replay_session(args, out: Path | None) -> int:
    from dataclasses import replace

    from inspector.core.session.file import load_session
    from inspector.core.workbench import Workbench

    session = load_session(args.session, trust=args.trust)
    if args.seed is not None:  # --seed wins over the session's seed
        session = replace(session, seed=_seed(args))
    bench = Workbench()
    outcome = bench.execute(session.run_request(trust=args.trust))
    _report(args, outcome.result, {"model": session.model, "weights": session.weights, "seed": bench.loaded.seed,
                                   "input": session.input, "session": str(args.session)}, out)
    return 0


def _report(args, result, manifest: dict, out: Path | None) -> None:
    """Write the .npz `out` (and with --manifest its JSON), then print predictions or --json statistics
    (valid JSON: NaN and infinities as the strings "NaN", "Infinity", "-Infinity")."""
    if out is not None:
        from inspector.core.outputs import make_parent

        make_parent(out)
        if args.manifest:
            from inspector.core.export import export_npz

            export_npz(result, out, manifest)
        else:
            result.save_npz(out)
    if args.json:
        from inspector.core.export import json_ready

        print(json.dumps(json_ready({**{k: manifest.get(k) for k in ("model", "weights", "seed", "input")},
                                     **result.summary()}), indent=1, allow_nan=False))
    else:
        for p in result.predictions:
            print(f"{p.probability:7.2%}  {p.label} (class {p.index})")
        if manifest.get("seed") is not None:
            print(_seed_note(manifest["seed"]))
        print(f"{len(result.captures)} captures, target {result.target}, "
              f"{result.timings.get('total_s', 0) * 1000:.0f} ms" + (f" -> {out}" if out is not None else ""))
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)


def _json_out(args) -> Path | None:
    """`--json FILE` of bench and sweep, checked before the long run."""
    from inspector.core.outputs import make_parent, output_path

    return make_parent(output_path(args.json, flag="--json")) if args.json else None


def cmd_bench(args) -> int:
    out = _json_out(args)
    if args.gui and args.video:
        from inspector.bench.live import main as bench_live

        report = bench_live(device=args.device)
        if out:
            out.write_text(json.dumps(report, indent=1))
        return 0
    if args.atlas:
        from inspector.bench.atlas import bench_atlas

        row = bench_atlas(args.model, args.images, args.batch, repeats=args.repeats, device=args.device)
        if out:
            out.write_text(json.dumps(row, indent=1))
        return 0
    if args.gui:
        from inspector.bench.gui import main as bench_gui

        report = bench_gui(args.model, repeats=args.repeats, device=args.device)
        if out:
            out.write_text(json.dumps(report, indent=1))
        return 0
    from inspector.core.allocator import allocator_note
    if args.diff:
        from inspector.bench.diff import bench_diff as bench_model
        from inspector.bench.diff import format_header
    else:
        from inspector.bench.engine import bench_model, format_header

    print(allocator_note())
    print(format_header())
    rows = [bench_model(name, args.repeats, args.device) for name in args.models]
    if out:
        out.write_text(json.dumps(rows, indent=1))
    return 0


def cmd_sweep(args) -> int:
    import tempfile

    from inspector.bench.sweep import hf_sources
    from inspector.bench.sweep import main as sweep

    out = _json_out(args)
    with tempfile.TemporaryDirectory(prefix="inspector-sweep-") as folder:
        rows = sweep((args.models or []) + hf_sources(folder) if args.hf else args.models, args.device)
    if out:
        out.write_text(json.dumps(rows, indent=1))
    return 0 if all(r["ok"] for r in rows) else 1


def cmd_samples(args) -> int:
    from inspector.core import list_samples

    for name in list_samples():
        print(f"sample:{name}")
    return 0


COMMANDS = {"layers": cmd_layers, "capture": cmd_capture, "bench": cmd_bench, "samples": cmd_samples,
            "attribute": cmd_attribute, "sweep": cmd_sweep, "diff": diff.run,
            "atlas": atlas.run}
