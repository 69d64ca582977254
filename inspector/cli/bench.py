"""`network-inspector bench`: the benchmarks users run (engine, diff, atlas, the app, a video, hand-offs)."""

from __future__ import annotations

import argparse

from inspector.core.common.errors import SpecError
from inspector.core.storage.writes import write_json

from . import atlas, common

DEFAULT_MODELS = ["resnet50", "vgg16", "convnext_tiny", "vit_b_16"]


def add_parser(sub) -> None:
    bench = sub.add_parser("bench", help="measure the engine against plain forward + backward")
    bench.add_argument("--models", nargs="+", default=DEFAULT_MODELS)
    bench.add_argument("--repeats", type=int, default=5)
    bench.add_argument("--device", default="cpu")
    bench.add_argument("--json", help="also write the rows to this JSON file")
    bench.add_argument("--gui", action="store_true",
                       help="measure the desktop app instead (GUI stalls, run-to-drawn, layer switch, "
                            "mosaic paint, toggle queueing); offscreen without a display")
    bench.add_argument("--model", default=None, help="with --gui: the model for the run and switch figures; "
                                                      "with --atlas: the model (default resnet18); with --concepts: "
                                                      "the model (default resnet50)")
    bench.add_argument("--diff", action="store_true",
                       help="measure `diff` instead: one diff run against one engine run of the same capture")
    bench.add_argument("--video", action="store_true",
                       help="with --gui: play a video through the app instead (frames -> panels per second "
                            "against plain forward + backward, GUI stalls, memory over 1,000 frames)")
    bench.add_argument("--atlas", action="store_true",
                       help="measure the channel atlas (every conv layer) against plain batched inference")
    bench.add_argument("--images", type=int, default=None,
                       help="with --atlas: images in the generated folder (default 64); with --concepts: the same "
                            "(default 200)")
    bench.add_argument("--batch", type=int, default=16, help="with --atlas or --concepts: batch size")
    bench.add_argument("--concepts", action="store_true",
                       help="measure concepts: the activation pass against plain batched inference over the same "
                            "folder, the time to fit K concepts (NMF) of --layer, and the Concepts view for one image "
                            "against one plain forward + backward (default resnet50 layer4, K=32, 200 images)")
    bench.add_argument("--layer", default=None, help="with --concepts: the layer (default layer4; relu3 on the demo)")
    bench.add_argument("--k", type=int, default=32, help="with --concepts: the number of concepts")
    bench.add_argument("--handoffs", action="store_true",
                       help="trace how many of the project's objects two paths pass through (an edit with the "
                            "Compare tab on screen until it is redrawn; atlas --ray until atlas.json), "
                            "and list them with -v")
    bench.add_argument("--attribution", action="store_true",
                       help="integrated gradients, SmoothGrad and occlusion against captum's, interleaved (time, "
                            "peak memory, how far the maps differ); --models default resnet50 vit_b_16; needs "
                            "captum (the dev group)")
    bench.add_argument("--trust", action="store_true",
                       help="what the evidence beside one map costs: deletion and insertion (protocols inspector "
                            "and rise2018), ROAD, MPRT (cascading) and random-logit of one --methods map (default "
                            "gradcam), each timed and its forward and backward passes counted, beside "
                            "pytorch-grad-cam's ROAD; --models default resnet50 (random weights); --repeats default 1")
    bench.add_argument("--methods", nargs="+", default=None,
                       help="with --attribution: ig, smoothgrad, occlusion; with --trust: the maps' methods (default "
                            "gradcam)")
    bench.add_argument("--against", choices=("captum", "whole"), default="captum",
                       help="with --attribution: captum's methods, or ours with every occluded copy run whole "
                            "(what occlusion's boxes gain)")
    bench.add_argument("--ig-auto", action="store_true",
                       help="integrated gradients with steps auto against captum at the steps auto chose (3 bundled "
                            "samples a model, or --images N); --models default resnet50 mobilenet_v3_large vit_b_16; "
                            "needs captum (the dev group)")
    bench.add_argument("--detection", action="store_true",
                       help="per-box Grad-CAM against a plain forward + scores[k].backward(), and D-RISE's masks per "
                            "second against a plain loop of forwards; --models default "
                            "fasterrcnn_mobilenet_v3_large_320_fpn retinanet_resnet50_fpn")
    bench.add_argument("--masks", type=int, default=32, help="with --detection: D-RISE's masks a run")
    bench.add_argument("--graph", action="store_true",
                       help="the graph view's rows: recording one forward's graph and laying it out (first graph, "
                            "a group opened and closed) against a plain forward (default models: resnet50 vit_b_16 "
                            "maskrcnn_resnet50_fpn; timm:NAME and demo too)")
    bench.add_argument("--remote", action="store_true",
                       help="a run through `network-inspector serve` on this machine (loopback) against the same run "
                            "in process: every leaf ticked, one layer visible; the time to the panels and to every "
                            "statistic, and the bytes received per run (default model resnet50)")
    bench.add_argument("--prompts", action="store_true",
                       help="issue 56's speed lines: text-prompt Grad-CAM on a ViT-B/16-sized CLIP (random weights, a "
                            "new prompt each time) against a plain forward + backward of its vision tower and one "
                            "text-tower forward, and LeGrad on --models (default vit_b_16, random weights) against a "
                            "plain forward + backward; --repeats default 3")
    bench.add_argument("--contract", action="store_true",
                       help="call every public API function with each argument of a wrong kind: list the calls "
                            "that raise anything but an InspectorError")
    bench.add_argument("-v", "--verbose", action="store_true", help="with --handoffs: list every hand-off")
    bench.add_argument("--no-ray", action="store_true", help="with --handoffs: trace the atlas without Ray")


def run(args) -> int:
    for name in ("images", "k", "batch", "repeats"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise SpecError(f"--{name} must be at least 1, not {value}.")
    out = common.json_out(args)
    if args.contract:
        from inspector.bench.contract import main as contract

        return contract()
    chosen = next((bench for flags, bench in BENCHES if all(getattr(args, flag) for flag in flags)), _engine)
    rows = chosen(args)
    if out:
        write_json(out, rows, indent=1)
    return 0


def _models(args, default) -> list[str]:
    """--models as given, or this benchmark's own `default` where it was left at the engine benchmark's."""
    return args.models if args.models != DEFAULT_MODELS else list(default)


def _repeats(args, default: int) -> int:
    """--repeats as given, or this benchmark's own `default` where it was left at the parser's 5."""
    return default if args.repeats == 5 else args.repeats


def _remote(args) -> list[dict]:
    from inspector.bench.remote import bench_remote

    return [bench_remote(name, repeats=args.repeats, device=args.device) for name in _models(args, ["resnet50"])]


def _prompts(args) -> list[dict]:
    from inspector.bench.prompts import LEGRAD_MODELS
    from inspector.bench.prompts import main as bench_prompts

    return bench_prompts(_models(args, LEGRAD_MODELS), repeats=_repeats(args, 3))


def _handoffs(args) -> list[dict]:
    from inspector.bench.handoffs import run_handoffs

    return run_handoffs(_atlas_command, ray=not args.no_ray, verbose=args.verbose)


def _graph(args) -> list[dict]:
    from inspector.bench.graph_layout import bench_graph

    return bench_graph(_models(args, ["resnet50", "vit_b_16", "maskrcnn_resnet50_fpn"]), repeats=args.repeats)


def _detection(args) -> list[dict]:
    from inspector.bench.detection import MODELS
    from inspector.bench.detection import main as bench_detection

    return bench_detection(_models(args, MODELS), repeats=args.repeats, masks=args.masks, device=args.device)


def _ig_auto(args) -> list[dict]:
    from inspector.bench.ig_auto import bench_ig_auto

    return bench_ig_auto(_models(args, ["resnet50", "mobilenet_v3_large", "vit_b_16"]),
                         images=3 if args.images in (None, 64) else args.images, repeats=args.repeats,
                         device=args.device)


def _trust(args) -> list[dict]:
    from inspector.core.records.methods import METHODS

    methods = args.methods or ["gradcam"]
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise SpecError(f"Unknown method {unknown[0]!r} for --trust. Methods: {', '.join(METHODS)}.")
    from inspector.bench.trust import main as bench_trust

    models = _models(args, ["resnet50"])
    return [row for method in methods for row in bench_trust(models, method, repeats=_repeats(args, 1),
                                                              device=args.device)]


def _attribution(args) -> list[dict]:
    from inspector.bench.attribution import METHODS
    from inspector.bench.attribution import main as bench_attribution

    return bench_attribution(_models(args, ["resnet50", "vit_b_16"]), tuple(args.methods or METHODS),
                             repeats=args.repeats, device=args.device, against=args.against)


def _video(args) -> dict:
    from inspector.bench.live import main as bench_live

    return bench_live(device=args.device)


def _concepts(args) -> dict:
    from inspector.bench.concepts import bench_concepts

    return bench_concepts(args.model or "resnet50", args.layer, args.images or 200, args.k, args.batch,
                          repeats=_repeats(args, 1), device=args.device)


def _atlas(args) -> dict:
    from inspector.bench.atlas import bench_atlas

    return bench_atlas(args.model or "resnet18", args.images or 64, args.batch, repeats=args.repeats,
                       device=args.device)


def _gui(args) -> dict:
    from inspector.bench.gui import main as bench_gui

    return bench_gui(args.model or "resnet18", repeats=args.repeats, device=args.device)


def _engine(args) -> list[dict]:
    """The engine's benchmark (or, with --diff, diff's), a table on stdout: when no other benchmark is asked for."""
    from inspector.core.engine.allocator import allocator_note
    if args.diff:
        from inspector.bench.diff import bench_diff as bench_model
        from inspector.bench.diff import format_header
    else:
        from inspector.bench.engine import bench_model, format_header

    print(allocator_note())
    print(format_header())
    return [bench_model(name, args.repeats, args.device) for name in args.models]


#: The benchmarks other than the engine's, by the flags that ask for each, the first that matches is run (so
#: `--gui --video` plays a video, `--gui` alone measures the app).
BENCHES = (
    (("remote",), _remote), (("prompts",), _prompts), (("handoffs",), _handoffs), (("graph",), _graph),
    (("detection",), _detection), (("ig_auto",), _ig_auto), (("trust",), _trust), (("attribution",), _attribution),
    (("gui", "video"), _video), (("concepts",), _concepts), (("atlas",), _atlas), (("gui",), _gui),
)


def _atlas_command(argv: list[str]) -> int:
    """`network-inspector atlas ARGV`, for the hand-off trace."""
    parser = argparse.ArgumentParser(prog="network-inspector")
    atlas.add_parser(parser.add_subparsers(dest="command"))
    return atlas.run(parser.parse_args(["atlas", *argv]))
