"""`network-inspector atlas`: the channel atlas of a folder of images (inspector.core.atlas)."""

from __future__ import annotations

import argparse
import sys

from inspector.core.errors import RunCancelled
from inspector.core.outputs import output_folder

from . import common
from .stop_after_batch import StopAfterBatch


def add_parser(sub) -> None:
    atlas = sub.add_parser("atlas", help="for every channel of the chosen layers, the images of a folder that "
                                         "excite it most (top K, argmax region, statistics)")
    common.model_args(atlas)
    atlas.add_argument("--data", required=True, help="folder of images (nested folders allowed) or a glob")
    atlas.add_argument("--layers", required=True, help="paths or globs, comma-separated; all; type:Conv2d")
    atlas.add_argument("--top", type=int, default=9, help="images kept per channel (default 9)")
    atlas.add_argument("--out", required=True, help="output folder: atlas.json and thumbnails/")
    atlas.add_argument("--batch", type=int, default=16, help="images per forward pass (default 16)")
    atlas.add_argument("--device", default="cpu", help="auto | cpu | cuda | cuda:N | mps")
    atlas.add_argument("--restart", action="store_true",
                       help="start over: forget the saved state (and atlas) of an earlier run in --out")
    atlas.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                       help="run as a Ray Data pipeline: a local Ray instance, or the cluster at ADDRESS "
                            "(HOST:PORT of its head, or auto); needs the ray extra (pip install 'network-inspector[ray]')")


def run(args: argparse.Namespace) -> int:
    from inspector.core.folder_jobs import check_address, check_counts
    from inspector.core.inputs.image_sets import list_images

    # what needs no model is said before torch is imported (a second, not the model's load); the layers next
    out = output_folder(args.out)
    check_counts(args.top, args.batch)
    common.check_model_args(args)
    list_images(args.data, exclude=out)
    if args.ray:
        check_address(args.ray)

    from inspector.core import resolve_device

    resolve_device(args.device)  # torch's, but before the model's code is imported

    from tqdm import tqdm

    from inspector.core.atlas import run_atlas

    loaded = common.load(args)
    bars = []

    def progress(done: int, total: int) -> None:
        if not bars:
            bars.append(tqdm(desc="atlas", total=total, unit="img", file=sys.stderr, dynamic_ncols=True))
        bars[0].update(done - bars[0].n)

    try:
        with StopAfterBatch() as stop:
            atlas = run_atlas(loaded, args.data, args.layers, args.top, args.out, batch=args.batch,
                              device=args.device, progress=progress, cancel=stop.asked_to,
                              use_ray=args.ray is not None, ray_address=args.ray or None, restart=args.restart)
            stop.written = True
    except RunCancelled as exc:
        print(str(exc), file=sys.stderr)
        return 130
    finally:
        for bar in bars:
            bar.close()
    for s in atlas["skipped"]:
        print(f"skipped {s['path']}: {s['reason']}", file=sys.stderr)
    channels = sum(layer["channels"] for layer in atlas["layers"].values())
    print(f"atlas of {atlas['images']} images ({len(atlas['skipped'])} skipped): {len(atlas['layers'])} layers, "
          f"{channels} channels, top {args.top} -> {args.out}/atlas.json")
    if loaded.seed is not None:
        print(common.seed_note(loaded.source, loaded.seed))
    return 0
