"""`network-inspector graph`: the graph of one forward written as a figure (.svg, .png, drawn as the app's Graph
tab draws it) or as node-link data (.json), with the values of a run on its nodes on request (`--values`): one
run's, or two runs compared node by node (`--values change`: with --edit edited vs baseline, with --against a second
checkpoint, as the app's Colour by "change with edits" and "divergence against").

With `--engine URL` the graph is recorded, and its values worked out, on a remote engine (`network-inspector
serve`): the model, --input and --against are the server's; the groups are opened, laid out and drawn here, into
the same bytes a local run writes."""

from __future__ import annotations

import math
import re
import sys

from inspector.core.common.errors import SpecError
from inspector.core.graph.values.colour_by import CHANGE, COMMAND_CHOICES, SHOWN
from inspector.core.storage.outputs import make_parent, not_read, output_path
from inspector.core.storage.paths import regular_file

from . import common, engine_args

SUFFIXES = (".svg", ".png", ".json")
_CALL = re.compile(r"#\d+$")
_METHOD = re.compile(r"\.\w+\(\.\.\.\)$")


def add_parser(sub) -> None:
    from inspector.core.graph.sizes import DEFAULT_SCALE, LONG_SIDE, MOST_PIXELS, SHORT_SIDE  # not the drawing

    g = sub.add_parser("graph", help="the graph of one forward as a figure (.svg, .png) or node-link data (.json)")
    common.model_args(g)
    g.add_argument("--input", default=None, help="image file, sample:NAME, or a .npy/.pt tensor (default: zeros of "
                                                  "the model's default input shape)")
    g.add_argument("--out", required=True,
                   help=".svg or .png: the graph laid out and drawn as the app draws it; .json: node-link data "
                        "(nodes, edges with shapes, groups; the whole graph unless --groups or --open is given)")
    g.add_argument("--groups", default=None, metavar="DEPTH",
                   help="open every group (non-leaf module call) up to this depth: 0 or closed (the default for a "
                        "figure: top-level groups closed), 1 (resnet's layer1..layer4 open), ..., or open (all)")
    g.add_argument("--open", default=None, metavar="GROUPS",
                   help="the groups to open, comma-separated module paths (layer1,layer3.0); the groups around "
                        "them open too")
    g.add_argument("--layers", default="all",
                   help="the module calls drawn as nodes: paths or globs, comma-separated; all; type:Bottleneck. A "
                        "module named here is one node, its insides left out (default all: every leaf module)")
    g.add_argument("--values", default=None, choices=list(COMMAND_CHOICES), metavar="VALUE",
                   help="run the model forward and backward and colour the nodes by "
                        + "; ".join(f"{s.name}: {s.title}" for s in SHOWN.values())
                        + f"; {CHANGE}: the relative L2 change of each node's output, edited (--edit) vs baseline, "
                          "or --against's model vs this one, the first node above --threshold outlined"
                        + " (a colour bar says the range); the first node with NaN/Inf is red, the path from the "
                          "input to it outlined; gradient: edges as wide as their gradient's L2. The .json holds "
                          "every node's values")
    g.add_argument("--edit", action="append", default=[], metavar="KEY=OP(ARGS)",
                   help="with --values: an edit the run makes (e.g. layer2.0.conv1:output=zero()); repeatable, "
                        f"applied in order. With --values {CHANGE}: each node's change edited vs baseline; with "
                        "--against too: applied to both models, as diff does")
    g.add_argument("--against", default=None, metavar="WEIGHTS",
                   help=f"with --values {CHANGE}: the second model, the same --model with these weights "
                        "(.safetensors or a weights-only checkpoint); each node's relative L2 divergence from this "
                        "one, as diff --json's rel_l2 of its output")
    g.add_argument("--threshold", type=float, default=None,
                   help=f"with --values {CHANGE}: relative L2 change above which a node has diverged (the first "
                        "such node is outlined; default 1e-3, as diff's)")
    g.add_argument("--target", default=None, help="with --values: what the gradient starts from: " + common.TARGET_HELP)
    g.add_argument("--scale", type=float, default=None, metavar="S",
                   help=f"pixels per unit of the layout (the app's pixels at zoom 1). .png: default {DEFAULT_SCALE:g}, "
                        f"at least what makes the short side {SHORT_SIDE} pixels, lowered (said on stderr) to keep a "
                        f"large graph within {MOST_PIXELS // 1_000_000} million pixels and {LONG_SIDE} a side; .svg: "
                        "the size it asks to be shown at (default 1)")
    engine_args.add(g)


def _groups(text: str | None) -> int | None:
    """--groups as a depth (None: every group open)."""
    word = text.strip().lower()
    if word == "open":
        return None
    if word == "closed":
        return 0
    if not re.fullmatch(r"\d+", word):
        raise SpecError(f"--groups takes closed, open or a depth 0 or more (1 opens the top-level groups), not {text!r}.")
    return int(word)


def _check(args):
    """What needs no model, said before torch is imported: the output, the groups, the scale, the values."""
    engine_args.check(args, ("--score-threshold", getattr(args, "score_threshold", None)))
    reads = common.files_read(args, ("--input", args.input), ("--against", args.against))
    out = not_read(output_path(args.out, suffixes=SUFFIXES), reads, typed=args.out)
    if args.groups is not None and args.open is not None:
        raise SpecError("--groups and --open both choose the groups drawn open: give one of them.")
    depth = _groups(args.groups) if args.groups is not None else 0
    names = None
    if args.open is not None:
        names = list(dict.fromkeys(n.strip() for n in args.open.split(",") if n.strip()))
        if not names:
            raise SpecError("--open names no group: give module paths, comma-separated (layer1,layer3.0).")
    if args.scale is not None:
        if not (math.isfinite(args.scale) and args.scale > 0):
            raise SpecError(f"--scale is a number of pixels per layout unit above 0, not {args.scale:g}.")
        if out.suffix.lower() == ".json":
            raise SpecError(f"--scale sizes a figure (.svg, .png); {out.name} is node-link data.")
    if args.target is not None:
        if args.values is None:
            raise SpecError("--target chooses what the gradient of --values starts from: add --values.")
        from inspector.core.target.text import parse_target  # torch-free

        parse_target(args.target)
    _check_layers(args.layers)
    _check_change(args)
    common.check_model_args(args)
    return out, depth, names


def _check_layers(text: str) -> None:
    if not any(p.strip() for p in text.split(",")):
        raise SpecError("--layers names no module: give paths or globs, comma-separated (layer1,layer2.*), "
                        "type:NAME, or all.")


def _check_change(args) -> None:
    """--edit, --against and --threshold: with the --values they need, each edit's text, the second model's file."""
    from inspector.core.compare.arguments import check_threshold
    from inspector.core.edits import parse_edit  # torch-free

    if args.edit and args.values is None:
        raise SpecError(f"--edit changes the run whose values are drawn: add --values ({CHANGE}: edited vs "
                        "baseline).")
    if args.against is not None and args.values != CHANGE:
        raise SpecError(f"--against draws each node's divergence from a second model: add --values {CHANGE}.")
    if args.threshold is not None:
        if args.values != CHANGE:
            raise SpecError(f"--threshold says which change is a divergence: add --values {CHANGE}.")
        check_threshold(args.threshold)
    if args.values == CHANGE and not args.edit and args.against is None:
        raise SpecError(f"--values {CHANGE} compares two runs: add --edit KEY=OP(ARGS) (edited vs baseline) or "
                        "--against WEIGHTS (a second checkpoint of the model).")
    for text in args.edit:
        parse_edit(text)
    if args.against is not None and args.engine is None:  # the second model's weights: what paths says of any file
        regular_file(args.against, "--against weights file", SpecError)


def _module_of(name: str) -> str:
    """The module path a group's id names (`layer1.0#1` -> `layer1.0`, `transform.postprocess(...)` -> `transform`)."""
    return _METHOD.sub("", _CALL.sub("", name))


def _check_modules(names: list[str], module) -> None:
    """--open names modules the model has (checked as soon as it loads, before its forward)."""
    _check_paths(names, {path for path, _ in module.named_modules()})


def _check_paths(names: list[str], paths: set[str]) -> None:
    unknown = [n for n in names if _module_of(n) not in paths]
    if unknown:
        raise SpecError(f"--open: this model has no module {', '.join(map(repr, unknown))} (it opens groups by module "
                        "path, e.g. layer1, layer1.0; `network-inspector layers` lists them).")


def _opened(graph, depth: int | None, names: list[str] | None) -> list[str]:
    """The groups drawn open: --open's and the groups around them, or every group up to `depth`."""
    if names is None:
        return [g.id for g in graph.groups] if depth is None else graph.groups_within(depth)
    ids = {g.id for g in graph.groups}
    for name in names:
        if name not in ids:
            nodes = {n.id for n in graph.nodes}
            why = ("is a leaf module (one node), not a group" if name in nodes
                   else "did not run as a group in this forward")
            raise SpecError(f"--open {name}: {name!r} {why}; groups here: "
                            f"{', '.join(g.id for g in graph.groups if not g.parent) or 'none'}.")
    opened = []
    for name in names:
        while name and name not in opened:
            opened.append(name)
            name = graph.group(name).parent
    return opened


def run(args) -> int:
    out, depth, names = _check(args)
    if args.engine is not None:
        return _run_remote(args, out, depth, names)

    from inspector.core import load_input
    from inspector.core.graph import record_graph

    loaded, second = _load(args)
    leaves = _leaves(args.layers, loaded)
    if names is not None:
        _check_modules(names, loaded.module)
    if args.input:
        x = load_input(args.input, loaded.preprocess, loaded.input_shape)
        shown_input = args.input
    else:
        x = loaded.example_input()
        if x is None:
            raise SpecError(f"graph needs --input for {args.model} (it has no default input shape).")
        shown_input = "zeros"
    graph = record_graph(loaded, x, leaves=leaves)
    if names is not None:
        _opened(graph, depth, names)  # --open's groups are in this forward: said before the values' run
    values = _values(args, loaded, second, x, graph) if args.values is not None else None
    return _written(args, out, depth, names, graph, values, f"{shown_input} ({'x'.join(map(str, x.shape))})",
                    loaded.source, loaded.seed)


def _run_remote(args, out, depth, names) -> int:
    """The graph recorded, and its values worked out, on `--engine`; opened, laid out and written here."""
    from inspector.core.records.graph import GraphRequest

    with engine_args.connect(args) as engine:
        info = engine_args.load(args, engine)
        patterns = [p.strip() for p in args.layers.split(",") if p.strip()]
        leaves = None if patterns == ["all"] else tuple(info.tree.select(patterns))
        if names is not None:
            _check_paths(names, {layer.path for layer in info.tree.layers} | {""})
        recorded = engine.call("graph", GraphRequest(info.request, args.input or "", leaves=leaves, layout=False))
        graph = recorded.graph
        if names is not None:
            _opened(graph, depth, names)  # --open's groups are in this forward: said before the values' run
        values = engine.call("values", _values_request(args, info, graph)) if args.values is not None else None
    shown_input = args.input or "zeros"
    return _written(args, out, depth, names, graph, values,
                    f"{shown_input} ({'x'.join(map(str, recorded.input_shape))})", info.source, info.seed)


def _values_request(args, info, graph):
    """What --values asks the engine for: a GraphValuesRequest of the graph it recorded."""
    from inspector.core.edits import parse_edit
    from inspector.core.records.graph import GraphValuesRequest
    from inspector.core.records.requests import ModelRequest

    edits = tuple(parse_edit(text) for text in args.edit)
    if args.values != CHANGE:
        return GraphValuesRequest(info.request, args.input or "", graph, "values", edits, target=args.target)
    if args.against is None:
        return GraphValuesRequest(info.request, args.input or "", graph, "edits", edits, target=args.target,
                                  threshold=args.threshold)
    from inspector.core.sources.loader import weights_shown

    return GraphValuesRequest(info.request, args.input or "", graph, "against", edits,
                              ModelRequest(args.model, args.against, bool(args.trust)), "both", args.target,
                              names=(weights_shown(args.model, args.weights), args.against),
                              threshold=args.threshold)


def _written(args, out, depth, names, graph, values, what: str, source: str, seed) -> int:
    """Write the graph (with `opened` open) and its values to `out`, and say what was written."""
    whole = out.suffix.lower() == ".json" and args.groups is None and names is None
    opened = _opened(graph, depth, names) if not whole else [g.id for g in graph.groups]
    say = print
    make_parent(out)
    if out.suffix.lower() == ".json":
        view = graph if whole else graph.closed(opened)
        _write_json(out, view, values, args.values)
    else:
        view = _write_figure(args, out, graph, opened, values, f"{args.model}, input {what}, {_described(depth, names)}")
    say(f"{len(view.nodes)} nodes, {len(view.edges)} edges, {len(view.groups)} group{'' if len(view.groups) == 1 else 's'} open"
        + (f", coloured by {args.values}" if values is not None and out.suffix.lower() != ".json" else "")
        + f" -> {out}")
    if seed is not None:
        say(common.seed_note(source, seed))
    if args.values == CHANGE:
        say(_divergence(values))
    for note in (*graph.notes, *_notes(values)):
        say(f"note: {note}")
    if graph.data_dependence:
        say(f"note: {graph.caption}")
    return 0


def _load(args):
    """The model, and with --against the second one (the same source with those weights)."""
    if args.against is None:
        return common.load(args), None
    from inspector.core.compare.pair import load_pair

    first, second = load_pair(args.model, args.weights, args.against, trust=args.trust, seed=common.seed(args))
    for model in (first, second):
        common.keep_scores(args, model)
    return first, second


def _leaves(text: str, loaded):
    """--layers as record_graph's `leaves`: the modules it names (None: all, every leaf module a node)."""
    patterns = [p.strip() for p in text.split(",") if p.strip()]
    if patterns == ["all"]:
        return None
    from inspector.core.sources.loaded import tree_of

    return tree_of(loaded).select(patterns)


def _values(args, loaded, second, x, graph):
    """The numbers --values draws: one run's (GraphValues), or two runs compared (GraphComparison)."""
    from inspector.core.graph.values import entry as v

    if args.values != CHANGE:
        return v.graph_values(loaded, x, graph, target=args.target, edits=args.edit)
    threshold = v.DEFAULT_THRESHOLD if args.threshold is None else args.threshold
    if second is None:
        return v.compare_edits(loaded, x, graph, args.edit, target=args.target, threshold=threshold)
    from inspector.core.sources.loader import weights_shown

    names = (weights_shown(args.model, args.weights), args.against)
    return v.compare_runs(loaded, second, x, graph, first_edits=args.edit, second_edits=args.edit,
                          target=args.target, threshold=threshold, names=names)


def _notes(values) -> tuple[str, ...]:
    if values is None:
        return ()
    if hasattr(values, "notes"):
        return tuple(values.notes)
    return tuple(dict.fromkeys((*values.first.notes, *values.second.notes)))


def _divergence(comparison) -> str:
    """The first node whose change is above the threshold, in one line."""
    node = comparison.first_divergent
    if node is None:
        return f"no node changes by more than {comparison.threshold:g}"
    return f"first divergent: {node} (relative L2 {comparison.change[node]:.3g}, above {comparison.threshold:g})"


def _described(depth: int | None, names: list[str] | None) -> str:
    if names is not None:
        return f"open: {', '.join(names)}"
    if depth is None:
        return "every group open"
    return "top-level groups closed" if depth == 0 else f"groups open to depth {depth}"


def _write_json(out, view, values, shown: str | None) -> None:
    from inspector.core.engine.export import json_text
    from inspector.core.storage.writes import write_text

    data = view.to_json()
    if values is not None:
        data["values"] = {"shown": shown, **values.for_view(view).to_json()}
    write_text(out, json_text(data, indent=1) + "\n")


def _write_figure(args, out, graph, opened, values, subtitle: str):
    """The figure of the graph with `opened` open, as .svg or .png; the view drawn."""
    from inspector.core.graph.draw.figure import draw_graph
    from inspector.core.graph.draw.values import overlay_of
    from inspector.core.graph.layout.graph_layout import GraphLayout

    layout = GraphLayout(graph).layout(opened)
    overlay = None
    if args.values == CHANGE:
        from inspector.core.graph.draw.compare import comparison_overlay

        overlay = comparison_overlay(values.for_view(layout.graph), "divergence" if args.against else "change")[0]
    elif values is not None:
        overlay = overlay_of(values.for_view(layout.graph), args.values)
    figure = draw_graph(layout, overlay, subtitle=subtitle)
    if out.suffix.lower() == ".svg":
        from inspector.core.graph.draw.svg import svg_text
        from inspector.core.storage.writes import write_text

        write_text(out, svg_text(figure, args.scale or 1.0))
    else:
        from inspector.core.graph.draw.png import png_image, png_scale
        from inspector.core.storage.writes import save_image

        scale, note = png_scale(figure, args.scale)
        if note:
            print(f"note: {note}", file=sys.stderr)
        save_image(out, png_image(figure, scale))
    return layout.graph
