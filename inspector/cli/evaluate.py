"""`network-inspector evaluate`: attribution maps evaluated over a folder of images (inspector.core.evaluate): each
method's map of every image scored by each metric, written per image, with the mean and its 95 % interval."""

from __future__ import annotations

import argparse
import json

from . import common, folder_job


def add_parser(sub) -> None:
    from inspector.core.evaluate.metrics import METRIC_ROWS
    from inspector.core.evaluate.settings import METRIC_OPTIONS, METRIC_SEED
    from inspector.core.records.protocols import DEFAULT_PROTOCOL, protocols_help

    p = folder_job.add_job_parser(sub, "evaluate", "attribution methods evaluated over a folder of images: each "
                                                   "map's deletion, insertion, ... per image, with the mean and its "
                                                   "95 %% confidence interval per method")
    p.add_argument("--methods", required=True,
                   help="attribution methods, comma-separated (as attribute --method names them: saliency, gradcam, "
                        "ig, ...), each with its defaults")
    p.add_argument("--metrics", default="deletion,insertion",
                   help="metrics of each map, comma-separated: " + "; ".join(
                       f"{m.name} ({', '.join(m.numbers)}): {m.help}" for m in METRIC_ROWS.values()) +
                        " (default deletion,insertion)")
    p.add_argument("--protocol", default=DEFAULT_PROTOCOL,
                   help=f"the preset deletion and insertion follow, as attribute --protocol (default "
                        f"{DEFAULT_PROTOCOL}): {protocols_help()}")
    p.add_argument("--metric-steps", type=int, default=None,
                   help="deletion's and insertion's steps K, where the protocol takes one (default: its own)")
    for option in METRIC_OPTIONS.values():  # each metric's own settings, recorded with the numbers
        seed = option.name.endswith("_seed")
        p.add_argument(option.flag, type=option.type, default=None, metavar=option.metavar,
                       help=(f"{option.help} (default {METRIC_SEED}: fixed, not drawn, so a job resumed or run again "
                             "gives the same files)" if seed else option.help).replace("%", "%%"))
    p.add_argument("--out", required=True, help="output folder: values.csv and values.json (per image), summary.csv "
                                                "and summary.json (per method and metric)")
    p.add_argument("--json", action="store_true", help="print summary.json (the summary and the settings) on stdout")
    folder_job.add_run_args(
        p, batch="images decoded ahead, and handed to a Ray replica, at a time (default 4)",
        restart="start over: forget the saved state (and results) of an earlier run in --out",
        ray="spread the images over Ray: a local Ray instance, or the cluster at ADDRESS (HOST:PORT of its head, "
            "or auto); needs the ray extra (pip install 'network-inspector[ray]')")
    p.set_defaults(batch=4)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from inspector.core.evaluate.settings import Settings, check_batch, check_request
    from inspector.core.evaluate.store import FOLDER
    from inspector.core.folder_jobs import check_folder

    settings = Settings(args.protocol, args.metric_steps, tuple(_metric_options(args).items()))
    folder_job.check_first(args, lambda: check_request(args.methods, args.metrics, settings),
                           lambda: check_batch(args.batch), lambda: check_folder(Path(args.out), FOLDER))

    from inspector.core.evaluate import run_evaluation

    loaded = common.load(args)
    bars = folder_job.StageBars({"images": ("evaluate", "img")})
    result = folder_job.run_job(
        args, lambda **run: run_evaluation(loaded, args.data, args.methods, args.metrics, args.out,
                                           protocol=args.protocol, steps=args.metric_steps,
                                           options=_metric_options(args), **run), bars, bars.stage("images"))
    if result is None:
        return 130
    folder_job.say_skipped(result["skipped"])
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print("\n".join(table(result)))
        print(f"-> {args.out}/summary.csv, summary.json, values.csv, values.json")
    folder_job.say_seed(loaded)
    return 0


def _metric_options(args: argparse.Namespace) -> dict:
    """The metrics' own settings given on the command line (settings.METRIC_OPTIONS; the others take defaults)."""
    from inspector.core.evaluate.settings import METRIC_OPTIONS

    return {name: getattr(args, name) for name in METRIC_OPTIONS if getattr(args, name) is not None}


def table(result: dict) -> list[str]:
    """The summary as a table: a row per method, metric and number, the mean and its interval."""
    settings = result["settings"]
    steps = f", {settings['steps']} steps" if settings.get("steps") is not None else ""
    own = "".join(f", {name} {value}" for name, value in settings.items() if name not in ("protocol", "steps"))
    lines = [f"{result['model']} on {result['images']} images ({len(result['skipped'])} skipped), protocol "
             f"{settings['protocol']}{steps}{own}; mean [{result['confidence']:.0%} interval]"]

    def number(value) -> str:
        return "-" if value is None else f"{value:.4f}"

    rows = [(f"{r['method']} {r['metric']} {r['number']}", f"{number(r['mean'])} [{number(r['ci_low'])}, "
             f"{number(r['ci_high'])}]  n={r['n']}") for r in result["summary"]]
    width = max(len(name) for name, _ in rows)
    return lines + [f"  {name:<{width}}  {value}" for name, value in rows]
