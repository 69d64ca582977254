"""What recording the graph of one forward costs: `record_graph` against one plain forward of the same model on
the same input, both without autograd, interleaved after a warm-up.

    uv run python -m inspector.bench.graph_record resnet50 vit_b_16 --repeats 9 --threads 1

Random weights (a torchvision model by name, built with weights=None), an input of batch 1 (224x224; `--size`).
The ratio is what recording adds to the forward it records (hooks on every module, the TorchFunctionMode,
following tensors, building the graph's records). On a machine shared with other work the wall clock drifts
between repeats, so each repeat's own ratio is taken (a forward and a recording timed back to back) and their
median shown; beside it the same for the process's CPU time, which other processes' load does not add to (with
one thread, `--threads 1`, it is the work done). The graph row of the benchmark (`bench --graph`) comes with the
layout.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torchvision

from inspector.core.graph import record_graph

from .timing import synchronize


def _clocks(fn, device: str) -> tuple[float, float]:
    """Wall and process CPU seconds of `fn()` on `device`."""
    synchronize(device)
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    synchronize(device)
    return time.perf_counter() - wall, time.process_time() - cpu


def measure(name: str, repeats: int = 5, device: str = "cpu", size: int = 224) -> dict:
    """Median ratios (wall, CPU) of recording to a plain no-grad forward, the fastest of each, the graph's size."""
    torch.manual_seed(0)
    extra = {"image_size": size} if name.startswith("vit_") else {}  # a ViT is built for one input size
    model = torchvision.models.get_model(name, weights=None, **extra).eval().to(device)
    x = torch.randn(1, 3, size, size, device=device)

    def plain():
        with torch.no_grad():
            model(x)

    plain()
    graph = record_graph(model, x)  # warm-up of both
    pairs = [(_clocks(plain, device), _clocks(lambda: record_graph(model, x), device)) for _ in range(repeats)]
    return {"model": name, "device": device, "size": size,
            "ratio": statistics.median(r[0] / f[0] for f, r in pairs),
            "cpu_ratio": statistics.median(r[1] / f[1] for f, r in pairs),
            "forward_s": min(f[0] for f, _ in pairs), "record_s": min(r[0] for _, r in pairs),
            "nodes": len(graph.nodes), "edges": len(graph.edges)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", default=["resnet50", "vit_b_16"])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--threads", type=int, default=None, help="torch's CPU threads (its default otherwise)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s)")
    for name in args.models:
        row = measure(name, args.repeats, args.device, args.size)
        print(f"{row['model']:>10} at {row['size']} px on {row['device']}: ratio {row['ratio']:.2f} wall, "
              f"{row['cpu_ratio']:.2f} CPU (fastest forward {row['forward_s'] * 1000:.0f} ms, fastest recording "
              f"{row['record_s'] * 1000:.0f} ms; {row['nodes']} nodes, {row['edges']} edges)")


if __name__ == "__main__":
    main()
