"""`network-inspector bench --diff`: one diff run against one engine run of the same capture.

Two copies of a model (random weights, one seed; the second with one late layer's weights
scaled, as a fine-tuned checkpoint would be), `output` and `grad_output` of every leaf, top-1.
Variants, interleaved in one process after a warm-up, medians of the repeats:
  single   the engine capturing that on the first model, with statistics (what `capture` does)
  bare     the same without statistics (a stricter baseline: the diff's runs leave them out too)
  diff     `diff_models` on both: two runs (no statistics: the comparison does not read them)
           and the comparison of every key
Target: diff/single <= 2.3x.
"""

from __future__ import annotations

import gc
import statistics
from typing import Callable

import torch

from inspector.core.compare.pair import diff_models
from inspector.core.sources.devices import resolve_device
from inspector.core.target.objective import Target
from inspector.core.engine.runner import run
from inspector.core.runspec import RunSpec
from inspector.core.sources.loaded import sharing_of, tree_of
from inspector.core.sources.loader import load_model

from .columns import Column, header, line, median, ratio, seconds
from .timing import timed

TARGET_RATIO = 2.3


def bench_diff(name: str, repeats: int = 5, device: str = "cpu", log: Callable[[str], None] = print) -> dict:
    first = load_model(name)
    second = load_model(name, seed=first.seed)  # the same weights (a seed only where they are random)
    device = resolve_device(device)
    for model in (first, second):
        model.module.to(device)
    x = (first.example_input() if first.input_shape else torch.zeros(1, 3, 224, 224)).to(device)
    x = torch.randn(x.shape, generator=torch.Generator().manual_seed(0)).to(device)
    leaves = [l.path for l in tree_of(first) if l.is_leaf and l.path and l.calls]
    modules = dict(second.module.named_modules())
    changed = next(p for p in reversed(leaves) if list(modules[p].parameters(recurse=False)))
    with torch.no_grad():
        for param in modules[changed].parameters(recurse=False):
            param.mul_(1.01)
    target = Target("top1")
    spec = RunSpec(tuple(leaves), frozenset({"output", "grad_output"}), (), target)
    bare_spec = RunSpec(tuple(leaves), frozenset({"output", "grad_output"}), (), target, stats=False)
    found = {}

    def single():
        run(first.module, x, spec, first.labels, sharing=sharing_of(first))

    def bare():
        run(first.module, x, bare_spec, first.labels, sharing=sharing_of(first))

    def diff():
        done = diff_models(first, second, x, leaves, ("output", "grad_output"), target, device)
        # what the row reports; the arrays go, as a single run's do
        found.update(compare_s=done.timings["compare_s"], first_divergent=done.first_divergent, keys=len(done.rows))

    variants = {"single": single, "bare": bare, "diff": diff}
    seconds: dict[str, list[float]] = {k: [] for k in variants}
    compare: list[float] = []
    for fn in variants.values():  # warm-up (and the sharing both models learn)
        fn()
    for _ in range(repeats):
        for key, fn in variants.items():
            gc.collect()
            seconds[key].append(timed(fn, device))
        compare.append(found["compare_s"])
    med = {k: statistics.median(v) for k, v in seconds.items()}
    row = {"model": name, "leaves": len(leaves), "changed": changed, "median_s": med,
           "min_s": {k: min(v) for k, v in seconds.items()}, "max_s": {k: max(v) for k, v in seconds.items()},
           "compare_s": statistics.median(compare), "diff/single": med["diff"] / med["single"],
           "diff/bare": med["diff"] / med["bare"],
           "first_divergent": found["first_divergent"], "keys": found["keys"]}
    log(format_row(row))
    return row


COLUMNS = [
    Column("keys", 6, "keys"), median("single", "single s", 10), median("bare", "bare s", 9),
    median("diff", "diff s", 9), Column("compare s", 11, "compare_s", seconds),
    Column("diff/single", 13, "diff/single", ratio), Column("diff/bare", 11, "diff/bare", ratio),
]


def format_header() -> str:
    return header("model", 20, COLUMNS) + f"  first divergent (changed layer)   target <= {TARGET_RATIO}x"


def format_row(row: dict) -> str:
    return line(row["model"], 20, COLUMNS, row) + f"  {row['first_divergent']} ({row['changed']})"
