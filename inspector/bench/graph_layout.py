"""What drawing the graph of a run costs: recording it, its first layout (every top-level group closed), and
opening and closing one group, against one plain forward of the same model, in one process.

    uv run python -m inspector.bench.graph_layout resnet50 vit_b_16 maskrcnn_resnet50_fpn --repeats 5
    uv run python -m inspector.bench.graph_layout --timm vit_huge_patch14_224 --repeats 3

Random weights (a torchvision model by name, built with weights=None, a detector's backbone too; `--timm NAME`:
a timm model built with pretrained=False), an input of batch 1 (224x224). Forward, recording and first layout
are timed back to back each repeat (a fresh `GraphLayout` each time: nothing laid out before), and medians
taken; "first graph" is recording plus the first layout, in seconds and as a ratio to that repeat's forward
(the targets of issue 42: within 1 s; opening or closing a group within 200 ms). Open and close: one
`GraphLayout`, each top-level group opened (its inside ordered then, the first time) and closed again; for groups
two deep, `--sample` of them spread over the graph, their parent open first (not timed): median and max of each;
and every group open at once (a fresh `GraphLayout`: every level ordered), as `graph --groups open` draws it.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from inspector.core.graph import Graph, record_graph
from inspector.core.graph.layout.graph_layout import GraphLayout

from .timing import timed


def _clocks(fn) -> tuple[float, float]:
    """Wall and CPU seconds of `fn()`, the CPU time of this thread only: the layout is one Python thread, so that
    is its work, which neither other processes' load on a shared machine nor torch's threads still spinning
    after a forward add to."""
    wall, cpu = time.perf_counter(), time.thread_time()
    fn()
    return time.perf_counter() - wall, time.thread_time() - cpu


def _torchvision(name: str, size: int) -> torch.nn.Module:
    import torchvision

    detectors = set(torchvision.models.list_models(torchvision.models.detection)) | \
        set(torchvision.models.list_models(torchvision.models.segmentation))
    extra = {"image_size": size} if name.startswith("vit_") else {}
    if name in detectors:
        extra["weights_backbone"] = None
    return torchvision.models.get_model(name, weights=None, **extra)


def _timm(name: str) -> torch.nn.Module:
    import timm

    return timm.create_model(name, pretrained=False)


def model_of(name: str, size: int = 224) -> tuple[torch.nn.Module, int]:
    """The model a bench row names (`demo`, `timm:NAME`, a torchvision name; random weights) and its input size."""
    if name == "demo":
        from inspector.core import load_model

        loaded = load_model("demo")
        return loaded.module, loaded.input_shape[-1]
    if name.startswith("timm:"):
        return _timm(name[5:]), size
    return _torchvision(name, size), size


def bench_graph(models: list[str], repeats: int = 5, sample: int = 20) -> list[dict]:
    """`network-inspector bench --graph`: one row a model, each printed as it is measured, then the table."""
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), {repeats} repeats, medians")
    rows = []
    for name in models:
        model, size = model_of(name)
        rows.append(measure(name, model, repeats, size, sample))
        print(table(rows[-1:]).splitlines()[-1], flush=True)
    print(table(rows))
    return rows


def _open_close(layouts: GraphLayout, groups: list[str], graph: Graph) -> tuple[list, list]:
    """(wall, CPU) seconds to open each of `groups` (its outer groups open) and to close it again."""
    opens, closes = [], []
    for group in groups:
        outer = _ancestors(graph, group)
        layouts.layout(outer)
        opens.append(_clocks(lambda: layouts.layout(outer | {group})))
        closes.append(_clocks(lambda: layouts.layout(outer)))
    return opens, closes


def _ancestors(graph: Graph, group: str) -> set[str]:
    out = set()
    while (group := graph.group(group).parent):
        out.add(group)
    return out


def _spread(items: list[str], n: int) -> list[str]:
    if len(items) <= n:
        return items
    return [items[round(i * (len(items) - 1) / (n - 1))] for i in range(n)] if n > 1 else items[:1]


def measure(name: str, model: torch.nn.Module, repeats: int, size: int = 224, sample: int = 20) -> dict:
    torch.manual_seed(0)
    model = model.eval()
    x = torch.randn(1, 3, size, size)

    def plain():
        with torch.no_grad():
            model(x)

    plain()
    graph = record_graph(model, x)  # warm-up of both
    GraphLayout(graph).layout()
    forwards, records, firsts, first_cpu = [], [], [], []
    for _ in range(repeats):
        forwards.append(timed(plain, "cpu"))
        box = {}
        records.append(timed(lambda: box.setdefault("graph", record_graph(model, x)), "cpu"))
        wall, cpu = _clocks(lambda: GraphLayout(box["graph"]).layout())
        firsts.append(wall)
        first_cpu.append(cpu)
    drawn = [r + f for r, f in zip(records, firsts)]
    layouts = GraphLayout(graph)
    layouts.layout()
    top = [g.id for g in graph.groups if not g.parent]
    two = _spread([g.id for g in graph.groups if graph.depth(g.id) == 2], sample)
    top_open, top_close = _open_close(layouts, top, graph)
    two_open, two_close = _open_close(layouts, two, graph)
    every = GraphLayout(graph)
    all_open = _clocks(lambda: every.layout(g.id for g in graph.groups))
    return {"model": name, "nodes": len(graph.nodes), "edges": len(graph.edges), "groups": len(graph.groups),
            "top_nodes": len(graph.closed().nodes), "forward_s": statistics.median(forwards),
            "record_s": statistics.median(records), "layout_s": statistics.median(firsts),
            "layout_cpu_s": statistics.median(first_cpu),
            "drawn_s": statistics.median(drawn),
            "drawn_ratio": statistics.median(d / f for d, f in zip(drawn, forwards)),
            "top": (len(top), top_open, top_close), "two": (len(two), two_open, two_close), "all_open_s": all_open}


def _ms(clocks: list[tuple[float, float]]) -> str:
    """`median / max` wall ms, and the same of CPU ms in brackets."""
    if not clocks:
        return "-"
    wall, cpu = [w for w, _ in clocks], [c for _, c in clocks]
    return f"{statistics.median(wall) * 1000:.0f} / {max(wall) * 1000:.0f} " \
        f"({statistics.median(cpu) * 1000:.0f} / {max(cpu) * 1000:.0f})"


def table(rows: list[dict]) -> str:
    head = ("| model | nodes / edges / groups (top level) | forward s | record s | first layout ms (CPU) | first graph "
            "s (x forward) | open a top group ms: median / max (CPU), n | close it ms | open a 2-deep group ms, n | "
            "close it ms | every group open ms (CPU) |\n|---|---|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    for r in rows:
        (nt, to, tc), (n2, wo, wc) = r["top"], r["two"]
        lines.append(f"| {r['model']} | {r['nodes']} / {r['edges']} / {r['groups']} ({r['top_nodes']}) | "
                     f"{r['forward_s']:.3f} | {r['record_s']:.3f} | {r['layout_s'] * 1000:.0f} ({r['layout_cpu_s'] * 1000:.0f}) | "
                     f"{r['drawn_s']:.3f} ({r['drawn_ratio']:.2f}x) | {_ms(to)}, {nt} | {_ms(tc)} | "
                     f"{_ms(wo)}, {n2} | {_ms(wc)} | {r['all_open_s'][0] * 1000:.0f} ({r['all_open_s'][1] * 1000:.0f}) |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", help="torchvision models (resnet50 vit_b_16 maskrcnn_resnet50_fpn when "
                        "neither these nor --timm are given)")
    parser.add_argument("--timm", action="append", default=[], metavar="NAME", help="a timm model too")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--sample", type=int, default=20, help="groups two deep opened (spread over the graph)")
    parser.add_argument("--threads", type=int, default=None, help="torch's CPU threads (its default otherwise)")
    args = parser.parse_args(argv)
    if not args.models and not args.timm:
        args.models = ["resnet50", "vit_b_16", "maskrcnn_resnet50_fpn"]
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), {args.repeats} repeats, medians")
    rows = []
    for name in args.models:
        rows.append(measure(name, _torchvision(name, args.size), args.repeats, args.size, args.sample))
        print(table(rows[-1:]).splitlines()[-1], flush=True)
    for name in args.timm:
        rows.append(measure(f"timm {name}", _timm(name), args.repeats, args.size, args.sample))
        print(table(rows[-1:]).splitlines()[-1], flush=True)
    print(table(rows))


if __name__ == "__main__":
    main()
