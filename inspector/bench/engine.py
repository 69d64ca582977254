"""The project's benchmark: engine runs against what users write by hand, in one process.

Variants, interleaved with warm-up and repeats:
  plain    forward + loss.backward() of the model (what users write by hand)
  floor    forward + backward with parameters frozen, only the input requiring grad
  all      the engine capturing output and grad_output of every leaf (CPU copies + statistics)
  nostats  the same without statistics (to show what statistics cost)
  visible  the same with statistics for one visible layer only (the late layer): when the app's
           panels can be drawn; timed in the same call, `update` adds the deferred statistics of
           every other capture (complete_statistics), `diagnosed` the diagnostics after them
           (gradient flow, dead units, first NaN/Inf), as the app's update carries
  late     the engine capturing output and grad_output of one late layer (the last conv)
  gradcam  Grad-CAM on the last conv (backward stops there); skipped when the model has none
  saliency the input gradient only (no parameter gradients)
"""

from __future__ import annotations

import gc
import statistics
import time
from dataclasses import dataclass
from typing import Callable

import torch

from inspector.core.attribution import gradcam, saliency
from inspector.core.attribution.cams.layers import find_gradcam_layer
from inspector.core.sources.devices import resolve_device
from inspector.core.common.errors import SpecError
from inspector.core.sources.layers import build_layer_tree
from inspector.core.target.objective import Target, objective
from inspector.core.engine.deferred import complete_statistics, with_statistics
from inspector.core.engine.runner import run
from inspector.core.runspec import RunSpec
from inspector.core.sources.sharing import Sharing
from inspector.core.sources.loader import load_model
from inspector.core.workbench import Analysis

from .columns import Column, header, line, median, megabytes, percent, ratio
from .timing import synchronize


@dataclass
class Timing:
    name: str
    seconds: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


def late_layer(tree) -> str:
    """A late layer to capture alone: the last conv, unless it sits early (a ViT's patch
    embedding); then the leaf nine tenths of the way through the forward pass."""
    leaves = [l.path for l in tree if l.is_leaf and l.path and l.calls]
    convs = [l.path for l in tree if l.is_leaf and l.type_name.startswith("Conv") and l.calls]
    if convs and leaves.index(convs[-1]) >= len(leaves) // 2:
        return convs[-1]
    return leaves[(len(leaves) * 9) // 10]


def bench_model(name: str, repeats: int = 5, device: str = "cpu", log: Callable[[str], None] = print) -> dict:
    loaded = load_model(name)
    device = resolve_device(device)
    model = loaded.module.to(device)
    shape = loaded.example_input().shape if loaded.input_shape else (1, 3, 224, 224)
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0)).to(device)  # the same input on any device
    tree = build_layer_tree(model, x)
    leaves = [l.path for l in tree if l.is_leaf and l.path and l.calls]
    late = late_layer(tree)
    target = Target("top1")

    def plain():
        model.zero_grad(set_to_none=True)
        xi = x.clone().requires_grad_(True)
        loss, _, _ = objective(model(xi), target)
        loss.backward()
        model.zero_grad(set_to_none=True)

    def floor():
        flags = [p.requires_grad for p in model.parameters()]
        for p in model.parameters():
            p.requires_grad_(False)
        try:
            xi = x.clone().requires_grad_(True)
            loss, _, _ = objective(model(xi), target)
            torch.autograd.grad(loss, xi)
        finally:
            for p, flag in zip(model.parameters(), flags):
                p.requires_grad_(flag)

    held = {}
    sharing = Sharing()  # as the app's Workbench holds for its model
    sites = frozenset({"output", "grad_output"})

    def engine(layers, stats=True):
        spec = RunSpec(tuple(layers), sites, (), target, stats=stats)

        def go():
            result = run(model, x, spec, sharing=sharing)
            held[len(layers), stats] = result.held_bytes()
        return go

    deferred = RunSpec(tuple(leaves), sites, (), target, stats_now=(late,))
    stages: dict[str, list[float]] = {"update": [], "diagnosed": []}

    def visible():
        """The app's path: panels drawn from the run, then the update. Returns when the run does;
        the time to each later stage is recorded from the same start."""
        start = time.perf_counter()
        result = run(model, x, deferred, sharing=sharing)
        ready = time.perf_counter()
        stats = complete_statistics(result)
        done = time.perf_counter()
        Analysis.of(with_statistics(result, stats))
        stages["update"].append(done - start)
        stages["diagnosed"].append(time.perf_counter() - start)
        return ready

    variants = {"plain": plain, "floor": floor, "all": engine(leaves), "nostats": engine(leaves, False),
                "visible": visible, "late": engine([late]), "saliency": lambda: saliency(model, x, target)}
    from inspector.core.attention.site import supports_attention

    attention = tuple(p for p, m in model.named_modules() if p and supports_attention(m))
    if attention:  # every attention module's probabilities, with the backward to the input
        spec_attention = RunSpec(attention, frozenset({"attention"}), (), target, input_grad=True)
        variants["attention"] = lambda: run(model, x, spec_attention, sharing=sharing)
    try:
        cam_layer = find_gradcam_layer(tree, model=model)
        variants["gradcam"] = lambda: gradcam(model, x, target, cam_layer)
    except SpecError:
        cam_layer = None
    timings = {k: Timing(k, []) for k in variants}
    for fn in variants.values():  # warm-up
        fn()
    for _ in range(repeats):
        for key, fn in variants.items():
            gc.collect()
            synchronize(x.device)
            start = time.perf_counter()
            ready = fn()
            synchronize(x.device)
            end = ready if key == "visible" else time.perf_counter()
            timings[key].seconds.append(end - start)
    for key, seconds in stages.items():
        timings[key] = Timing(key, seconds[-repeats:])  # the warm-up call recorded one too
    med = {k: t.median for k, t in timings.items()}
    row = {
        "model": name,
        "leaves": len(leaves),
        "late_layer": late,
        "median_s": med,
        "min_s": {k: min(t.seconds) for k, t in timings.items()},
        "max_s": {k: max(t.seconds) for k, t in timings.items()},
        "all/plain": med["all"] / med["plain"],
        "all/floor": med["all"] / med["floor"],
        "late/plain": med["late"] / med["plain"],
        "stats_overhead": med["all"] / med["nostats"] - 1,
        "nostats/floor": med["nostats"] / med["floor"],
        "visible/floor": med["visible"] / med["floor"],
        "update/floor": med["update"] / med["floor"],
        "diagnosed/floor": med["diagnosed"] / med["floor"],
        "gradcam_layer": cam_layer,
        "gradcam/plain": med["gradcam"] / med["plain"] if "gradcam" in med else None,
        "saliency/plain": med["saliency"] / med["plain"],
        "attention_modules": len(attention),
        "attention/plain": med["attention"] / med["plain"] if "attention" in med else None,
        "captures_mb": held.get((len(leaves), True), 0) / 2**20,
    }
    log(format_row(row))
    return row


COLUMNS = [
    median("plain", "plain s", 9), median("floor", "floor s", 9), median("all", "all s", 9),
    median("late", "late s", 9), Column("all/plain", 11, "all/plain", ratio),
    Column("all/floor", 11, "all/floor", ratio), Column("late/plain", 11, "late/plain", ratio),
    Column("stats +", 9, "stats_overhead", percent), Column("nostats/floor", 15, "nostats/floor", ratio),
    Column("held MB", 9, "captures_mb", megabytes), Column("gradcam/plain", 15, "gradcam/plain", ratio),
    Column("saliency/plain", 16, "saliency/plain", ratio), Column("visible/floor", 15, "visible/floor", ratio),
    Column("update/floor", 14, "update/floor", ratio), Column("diagnosed/floor", 17, "diagnosed/floor", ratio),
    Column("attention/plain", 17, "attention/plain", ratio),
]


def format_header() -> str:
    return header("model", 20, COLUMNS)


def format_row(row: dict) -> str:
    return line(row["model"], 20, COLUMNS, row)
