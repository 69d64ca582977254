"""`network-inspector atlas`: the channel atlas of a folder of images (inspector.core.atlas)."""

from __future__ import annotations

import argparse

from . import common, folder_job


def add_parser(sub) -> None:
    atlas = folder_job.add_job_parser(sub, "atlas", "for every channel of the chosen layers, the images of a folder "
                                                    "that excite it most (top K, argmax region, statistics)")
    atlas.add_argument("--layers", required=True, help="paths or globs, comma-separated; all; type:Conv2d")
    atlas.add_argument("--top", type=int, default=9, help="images kept per channel (default 9)")
    atlas.add_argument("--out", required=True, help="output folder: atlas.json and thumbnails/")
    folder_job.add_run_args(
        atlas, batch="images per forward pass (default 16)",
        restart="start over: forget the saved state (and atlas) of an earlier run in --out",
        ray="run as a Ray Data pipeline: a local Ray instance, or the cluster at ADDRESS (HOST:PORT of its head, or "
            "auto); needs the ray extra (pip install 'network-inspector[ray]')")


def run(args: argparse.Namespace) -> int:
    from inspector.core.folder_jobs import check_counts

    folder_job.check_first(args, lambda: check_counts(args.top, args.batch))  # the layers next, with the model

    from inspector.core.atlas import run_atlas

    loaded = common.load(args)
    bars = folder_job.StageBars({"images": ("atlas", "img")})
    atlas = folder_job.run_job(args, lambda **run: run_atlas(loaded, args.data, args.layers, args.top, args.out, **run),
                               bars, bars.stage("images"))
    if atlas is None:
        return 130
    folder_job.say_skipped(atlas["skipped"])
    channels = sum(layer["channels"] for layer in atlas["layers"].values())
    print(f"atlas of {atlas['images']} images ({len(atlas['skipped'])} skipped): {len(atlas['layers'])} layers, "
          f"{channels} channels, top {args.top} -> {args.out}/atlas.json")
    folder_job.say_seed(loaded)
    return 0
