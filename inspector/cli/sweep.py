"""`network-inspector sweep`: load many models with random weights and capture every leaf."""

from __future__ import annotations

from inspector.core.storage.writes import write_json

from . import common


def add_parser(sub) -> None:
    sweep = sub.add_parser("sweep", help="load many models (random weights) and capture output and grad_output "
                                         "of every leaf: which ones work, and how long each takes")
    sweep.add_argument("--models", nargs="+", default=None,
                       help="sources to try (default: every torchvision classification, segmentation and detection "
                            "model and 40 timm models across families)")
    sweep.add_argument("--device", default="cpu")
    sweep.add_argument("--hf", action="store_true",
                       help="sweep transformers image models across families instead (default-size configs "
                            "loaded as hf: folders with random weights)")
    sweep.add_argument("--json", help="also write the rows to this JSON file")


def run(args) -> int:
    import tempfile

    from inspector.bench.sweep import hf_sources
    from inspector.bench.sweep import main as sweep

    out = common.json_out(args)
    with tempfile.TemporaryDirectory(prefix="inspector-sweep-") as folder:
        rows = sweep((args.models or []) + hf_sources(folder) if args.hf else args.models, args.device)
    if out:
        write_json(out, rows, indent=1)
    return 0 if all(r["ok"] for r in rows) else 1
