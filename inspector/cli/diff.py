"""`network-inspector diff`: two models side by side, compared layer by layer.

"""

from __future__ import annotations

import sys
from pathlib import Path

from inspector.core.storage.outputs import not_read, output_path
from inspector.core.sources.seeds import check_seed
from inspector.core.storage.writes import save_npz

from . import common, engine_args


def add_parser(sub) -> None:
    diff = sub.add_parser("diff", help="compare two checkpoints (or two models) layer by layer: the first "
                                       "layer where they diverge")
    common.model_args(diff)
    diff.add_argument("--against", default=None, metavar="WEIGHTS",
                      help="the second model: the same --model with these weights (.safetensors or a "
                           "weights-only checkpoint)")
    diff.add_argument("--against-model", default=None, metavar="SOURCE",
                      help="the second model: another source with matching module paths")
    diff.add_argument("--against-weights", default=None, metavar="W2",
                      help="with --against-model: its weights (random | pretrained | PATH)")
    diff.add_argument("--against-seed", default=None, metavar="N",
                      help="with random weights for the second model: its seed (default: a new one, printed); "
                           "--seed is the first model's")
    diff.add_argument("--input", required=True, help="image file, sample:NAME, or a .npy/.pt tensor")
    diff.add_argument("--layers", default="all", help="paths or globs, comma-separated; all; type:Conv2d")
    diff.add_argument("--sites", default="output,grad_output",
                      help="any of input, output, grad_output, grad_input, params (only input/output decide "
                           "the first divergent layer)")
    diff.add_argument("--target", default=None,
                      help="resolved on the first model (top1 becomes its class), the same for both")
    diff.add_argument("--threshold", type=float, default=1e-3,
                      help="relative L2 difference above which a layer has diverged (default 1e-3)")
    diff.add_argument("--edit", action="append", default=[], metavar="KEY=OP(ARGS)",
                      help="edit applied to both models; repeatable")
    diff.add_argument("--device", default="cpu", help="auto | cpu | cuda | cuda:N | mps (both models)")
    diff.add_argument("--json", action="store_true", help="print first_divergent, rows, only_in_*, predictions")
    diff.add_argument("--out", help="write both models' arrays and their differences to this .npz "
                                    "(first/KEY, second/KEY, diff/KEY = second - first)")
    engine_args.add(diff)


def run(args) -> int:
    from inspector.core.compare.arguments import check_threshold, second_model
    from inspector.core.edits import parse_edit
    from inspector.core.inputs.samples import input_file
    from inspector.core.common.keys import parse_sites
    from inspector.core.target.text import parse_target

    # what needs no model is said before torch is imported (a second, not the two models' loads)
    second_model(args.model, args.against, args.against_model, args.against_weights)
    common.check_model_args(args)
    against_seed = check_seed(args.against_seed, "--against-seed", text=True)
    input_file(args.input)
    parse_sites(args.sites)
    for text in args.edit:
        parse_edit(text)
    parse_target(args.target)
    check_threshold(args.threshold)
    reads = common.files_read(args, ("--input", args.input), ("--against", args.against),
                              ("--against-model", args.against_model), ("--against-weights", args.against_weights))
    out = None
    if args.out:
        out = not_read(output_path(args.out, ".npz"), reads, typed=args.out if args.out.endswith(".npz") else None)

    engine_args.check(args, ("--score-threshold", args.score_threshold))
    if args.engine is not None:
        return _diff_remote(args, against_seed, out)

    from inspector.core import resolve_device

    resolve_device(args.device)  # torch's, but before either model's code is imported

    from inspector.core import load_input
    from inspector.core.compare.pair import diff_models, load_pair
    from inspector.core.engine.export import json_text

    first, second = load_pair(args.model, args.weights, args.against, args.against_model, args.against_weights,
                              trust=args.trust, seed=common.seed(args), against_seed=against_seed)
    for model in (first, second):
        common.keep_scores(args, model)
    from inspector.core.edits import check_edits as check_concept_edits

    for model in (first, second):  # as capture refuses them: before either run, naming both models
        check_concept_edits([parse_edit(text) for text in args.edit], model)
    x = load_input(args.input, first.preprocess, first.input_shape)
    diff = diff_models(first, second, x, args.layers, args.sites, args.target, args.device, args.threshold,
                       edits=args.edit)
    return _report(args, diff, first, second, out)


def _diff_remote(args, against_seed: int | None, out: Path | None) -> int:
    """The diff run on `--engine`: the second model loaded there first (for the seed it takes), then the first,
    its layers chosen from the tree it sends; one run of both, compared there; the files written here."""
    from dataclasses import replace

    from inspector.core.compare.arguments import second_model
    from inspector.core.records.requests import AgainstRequest, ModelRequest, RunRequest
    from inspector.core.runspec import RunSpec

    source, weights = second_model(args.model, args.against, args.against_model, args.against_weights)
    with engine_args.connect(args) as engine:
        second = engine.call("load", ModelRequest(source, weights, bool(args.trust), against_seed))
        first = engine_args.load(args, engine)
        spec = RunSpec.make((), args.sites, args.edit, args.target)
        spec = replace(spec, layers=tuple(first.tree.select(args.layers, params="params" in spec.sites)))
        outcome = engine.call("run", RunRequest(first.request, args.input, args.device, spec,
                                                against=AgainstRequest(second.request, spec.edits, args.threshold)))
    return _report(args, outcome.against, first, second, out)


def _report(args, diff, first, second, out: Path | None) -> int:
    """Write the .npz `out`, print the table or --json, the seeds and the warnings. `first`, `second`: the
    models (here) or their ModelInfo (on an engine): each has a source and a seed."""
    from inspector.core.engine.export import json_text

    if out is not None:
        save_npz(out, diff.arrays())
    if args.json:
        print(json_text({**diff.to_dict(), "seeds": {"first": first.seed, "second": second.seed}}, indent=1))
    else:
        _print_table(diff, out)
        for side, model, flag in (("first", first, "--seed"), ("second", second, "--against-seed")):
            if model.seed is not None:
                print(f"{side} model: {common.seed_note(model.source, model.seed, flag)}")
    for side, result in (("first", diff.first), ("second", diff.second)):
        for warning in result.warnings:
            print(f"warning ({side}): {warning}", file=sys.stderr)
    return 0


def _print_table(diff, out: Path | None) -> None:
    print(f"first:  {diff.names[0]}\nsecond: {diff.names[1]}")
    width = max([len(r.key) for r in diff.rows] + [10])
    print(f"{'key':<{width}}  {'rel_l2':>10}  {'cosine':>10}  {'max_abs':>10}")
    for r in diff.rows:
        mark = "  <- first divergent" if r.key == diff.first_divergent else ""
        print(f"{r.key:<{width}}  {r.rel_l2:>10.3g}  {r.cosine:>10.6f}  {r.max_abs:>10.3g}{mark}")
    for side, keys in (("first", diff.only_in_first), ("second", diff.only_in_second)):
        if keys:
            print(f"only in the {side} model: {', '.join(keys)}")
    print(f"target {diff.first.target}" + (f" (class {diff.first.target_index})"
                                          if diff.first.target_index is not None else ""))
    for d in diff.deltas:
        print(f"{d.first:7.2%} -> {d.second:7.2%}  ({d.delta:+.2%})  {d.label} (class {d.index})")
    if diff.boxes is not None:
        _print_boxes(diff)
    verdict = (f"first divergent: {diff.first_divergent}" if diff.first_divergent
               else f"no forward capture diverges beyond {diff.threshold:g}")
    print(verdict + (f" -> {out}" if out else ""))


def _print_boxes(diff) -> None:
    """One line per object shown in either detector: what became of it, with both scores and the IoU."""
    from inspector.core.detection.changes import summary

    before, after = diff.first.detections, diff.second.detections
    print(f"boxes scoring {diff.min_score:.2f} or more: {summary(diff.boxes)}")
    for c in diff.boxes:
        was = before[c.before] if c.before is not None else None
        now = after[c.after] if c.after is not None else None
        name = (now or was).name
        scores = f"{was.score:.2f}" if was else "-"
        scores += f" -> {now.score:.2f}" if now else " -> -"
        where = ", ".join(f"{v:.0f}" for v in (now or was).box)
        print(f"  {c.kind:<8}  {name:<16} {scores:<13}  IoU {c.iou:.2f}  box {where}")
