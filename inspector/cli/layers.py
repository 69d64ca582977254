"""`network-inspector layers`: the module tree of a model."""

from __future__ import annotations

import json

from . import common


def add_parser(sub) -> None:
    parser = sub.add_parser("layers", help="list the module tree")
    common.model_args(parser)
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args) -> int:
    from inspector.core import layer_tree

    loaded = common.load(args)
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
        print(common.seed_note(loaded.source, loaded.seed))
    return 0
