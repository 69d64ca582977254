"""What the values on the graph cost: `graph_values` (one recorded forward with every node's statistics and a
gradient hook on every node's output, then the backward of the top class) against one plain forward and backward
of the same model on the same input (the top class's logit differentiated to the input, as the values run does),
interleaved after a warm-up; and `compare_edits` (two such runs, the first keeping a copy of every output) against
two plain ones.

    uv run python -m inspector.bench.graph_values resnet50 --repeats 5 --threads 1

Random weights (a torchvision model by name, weights=None), an input of batch 1 (224x224; `--size`). Each
repeat's own ratio (the plain pass and the values pass timed back to back) and their median, for the wall clock
and for the process's CPU time (which other processes' load does not add to), as `graph_record` reports them.
"""

from __future__ import annotations

import argparse
import statistics

import torch
import torchvision

from inspector.core.graph import record_graph
from inspector.core.graph.values.entry import compare_edits, graph_values

from .graph_record import _clocks


def measure(name: str, repeats: int = 5, device: str = "cpu", size: int = 224, compare: bool = True) -> dict:
    torch.manual_seed(0)
    extra = {"image_size": size} if name.startswith("vit_") else {}
    model = torchvision.models.get_model(name, weights=None, **extra).eval().to(device)
    x = torch.randn(1, 3, size, size, device=device)
    graph = record_graph(model, x)
    first_leaf = next(n.path for n in graph.nodes if n.kind == "module")
    edit = [f"{first_leaf}:output=scale(0.5)"]

    def plain():
        leaf = x.detach().clone().requires_grad_()
        logits = model(leaf)
        torch.autograd.grad(logits[0, int(logits[0].argmax())], leaf)

    def values():
        graph_values(model, x, graph)

    def both():
        compare_edits(model, x, graph, edit)

    plain(), values()  # warm-up
    pairs = [(_clocks(plain, device), _clocks(values, device)) for _ in range(repeats)]
    row = {"model": name, "device": device, "size": size, "nodes": len(graph.nodes),
           "ratio": statistics.median(v[0] / p[0] for p, v in pairs),
           "cpu_ratio": statistics.median(v[1] / p[1] for p, v in pairs),
           "plain_s": min(p[0] for p, _ in pairs), "values_s": min(v[0] for _, v in pairs)}
    if compare:
        both()
        triples = [(_clocks(plain, device), _clocks(both, device)) for _ in range(repeats)]
        row.update(compare_ratio=statistics.median(c[0] / p[0] for p, c in triples),
                   compare_s=min(c[0] for _, c in triples))
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", default=["resnet50"])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--threads", type=int, default=None, help="torch's CPU threads (its default otherwise)")
    parser.add_argument("--no-compare", action="store_true", help="time graph_values only")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s)")
    for name in args.models:
        row = measure(name, args.repeats, args.device, args.size, not args.no_compare)
        line = (f"{row['model']:>10} at {row['size']} px on {row['device']} ({row['nodes']} nodes): values / plain "
                f"forward+backward {row['ratio']:.2f} wall, {row['cpu_ratio']:.2f} CPU (fastest plain "
                f"{row['plain_s'] * 1000:.0f} ms, fastest values {row['values_s'] * 1000:.0f} ms)")
        if "compare_ratio" in row:
            line += (f"; compare_edits / one plain {row['compare_ratio']:.2f} wall "
                     f"(fastest {row['compare_s'] * 1000:.0f} ms)")
        print(line, flush=True)


if __name__ == "__main__":
    main()
