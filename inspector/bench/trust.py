"""`bench --trust`: what the evidence beside one map costs (issue 55: the trust card). For one method's map of one
input (random weights, seed 0; the demo's own), each check the card makes, timed (median of `repeats`) and its
passes counted by hooks on the model's root module: a forward pre-hook adds each call's batch items, a forward
hook puts a tensor hook on the output that counts each backward through it (and its items). The counts show how a
check is batched (K images scored in a few forwards, an MPRT step a forward and a backward each). Each row's
seconds are also given as a multiple of one plain forward of the input (no gradients, batch 1), measured in the
same process right before each run (the median of 3), so a shared machine's drifting load moves both alike.

    deletion, insertion (inspector, K steps)  2 (K + 1) images, no gradients, batched      scores.faithfulness
    deletion, insertion (rise2018)            2 (ceil(H W / 224) + 1) images, batched      scores.faithfulness
    ROAD                                      2 x 9 imputed images (MoRF, LeRF), batched   scores.road
    MPRT (cascading)                          1 forward for the layers' order, then a map a layer
    random-logit                              1 forward for the classes, then the other class's map

The map itself is made once (its own row) and given to every check as its original, as the card does. Where a
peer library implements a check it runs beside ours on the same map, interleaved: pytorch-grad-cam's ROAD
(`ROADCombined` over the same percentiles, its NoisyLinearImputer with the same noise). pytorch-grad-cam and captum
have no deletion/insertion curve, MPRT or random-logit; Quantus has MPRT and random-logit but is not installed here
(its row says so).
"""

from __future__ import annotations

import math
import statistics
import time
from contextlib import contextmanager
from typing import Callable, Iterator

import numpy as np
import torch

from .timing import synchronize

#: The percentages ROAD removes (scores.road's default), which grad-cam's ROADCombined takes as the percentiles kept.
ROAD_AT = (10, 20, 30, 40, 50, 60, 70, 80, 90)
QUANTUS = "Quantus (MPRT, RandomLogit) is not installed; captum and pytorch-grad-cam have none"
NO_GAMES = "pytorch-grad-cam and captum have no deletion/insertion curve; Quantus is not installed"


@contextmanager
def counted_passes(module: torch.nn.Module) -> Iterator[dict]:
    """Counts of the passes through `module` while in the block: forward calls and their batch items (the largest
    batch too), backward passes through its output and their items. The hooks are plain functions, so a deep copy
    of the module (MPRT's) keeps counting into the same counts."""
    counts = {"forward_calls": 0, "forwards": 0, "largest_batch": 0, "backward_calls": 0, "backwards": 0}

    def before(_module, args) -> None:
        first = args[0] if args else None
        items = int(first.shape[0]) if isinstance(first, torch.Tensor) and first.ndim else 1
        counts["forward_calls"] += 1
        counts["forwards"] += items
        counts["largest_batch"] = max(counts["largest_batch"], items)

    def after(_module, _args, output) -> None:
        out = output if isinstance(output, torch.Tensor) else None
        if out is not None and out.requires_grad:
            items = int(out.shape[0]) if out.ndim else 1

            def backward(grad):
                counts["backward_calls"] += 1
                counts["backwards"] += items

            out.register_hook(backward)

    handles = [module.register_forward_pre_hook(before), module.register_forward_hook(after)]
    try:
        yield counts
    finally:
        for handle in handles:
            handle.remove()


def batching(counts: dict) -> str:
    """How the passes went, in words."""
    if not counts["forwards"]:
        return "no pass"
    words = (f"{counts['forwards']} images in {counts['forward_calls']} forward"
             f"{'s' if counts['forward_calls'] != 1 else ''} (up to {counts['largest_batch']} a batch)")
    if counts["backwards"]:
        words += f", {counts['backwards']} backward{'s' if counts['backwards'] != 1 else ''}"
    return words


def checks(loaded, x: torch.Tensor, method: str, found, steps: int) -> dict[str, Callable[[], object]]:
    """Ours: each check of the card on the map `found`, by name."""
    from inspector.core.attribution.sanity.random_logit import random_logit
    from inspector.core.attribution.sanity.randomisation import mprt
    from inspector.core.attribution.scores.faithfulness import scored

    return {
        f"deletion+insertion inspector K={steps}": lambda: scored(loaded, x, found, ("deletion", "insertion"), steps,
                                                                  protocol="inspector"),
        "deletion+insertion rise2018": lambda: scored(loaded, x, found, ("deletion", "insertion"),
                                                      protocol="rise2018"),
        "road": lambda: scored(loaded, x, found, ("road",), road_seed=0, road_percentages=ROAD_AT),
        "mprt cascading": lambda: mprt(loaded, x, method, seed=0, original=found),
        "random-logit": lambda: random_logit(loaded, x, method, seed=0, original=found),
    }


def peers(loaded, x: torch.Tensor, found) -> dict[str, tuple[str, Callable[[], object] | None]]:
    """The peer of each check: (whose, a function running it on the same map, or None with why not)."""
    try:
        from importlib.metadata import version

        from pytorch_grad_cam.metrics.road import ROADCombined
        from pytorch_grad_cam.utils.model_targets import ClassifierOutputSoftmaxTarget
    except ImportError:
        road = ("pytorch-grad-cam is not installed (the dev group)", None)
    else:
        cams = np.asarray(found.map, np.float32)[None]
        targets = [ClassifierOutputSoftmaxTarget(found.target_index)]
        module = loaded.module
        road = (f"pytorch-grad-cam {version('grad-cam')} ROADCombined",
                lambda: ROADCombined(percentiles=list(ROAD_AT))(x, cams, targets, module))
    return {"road": road, "mprt cascading": (QUANTUS, None), "random-logit": (QUANTUS, None)}


def _run(fn: Callable[[], object], module: torch.nn.Module, device) -> tuple[float, dict]:
    with counted_passes(module) as counts:
        synchronize(device)
        start = time.perf_counter()
        fn()
        synchronize(device)
        seconds = time.perf_counter() - start
    return seconds, dict(counts)


def _loaded(name: str, device: str):
    from inspector.core import load_model, resolve_device

    loaded = load_model(name) if name == "demo" else load_model(name, "random", seed=0)
    dev = resolve_device(device)
    loaded.module.to(dev).eval()
    return loaded, dev


def bench_model(name: str, method: str = "gradcam", repeats: int = 1, steps: int = 50, device: str = "cpu",
                log=print) -> list[dict]:
    """One row per check (and one for the map, one for a plain forward) of `method`'s map on `name`."""
    from inspector.core.attribution import attribute
    from inspector.core.sources.loaded import detects

    loaded, dev = _loaded(name, device)
    module = loaded.module
    shape = loaded.input_shape or (1, 3, 224, 224)
    x = torch.randn(shape, generator=torch.Generator().manual_seed(1)).to(dev)

    def forward():
        with torch.no_grad():
            module(x)

    def plain() -> float:
        """One plain forward's seconds, the median of 3, measured right before a check's run: the unit of its
        'x fwd' (a shared machine's load drifts over minutes, so each run has its own)."""
        return statistics.median(_run(forward, module, dev)[0] for _ in range(3))

    forward()  # warm-up
    detects(loaded)  # the layer tree kept with the model, built once (a forward) before any row counts passes
    base = [_run(forward, module, dev) for _ in range(max(3, repeats))]
    rows = [_row(name, method, "plain forward", [s for s, _ in base], base[0][1], [s for s, _ in base])]
    units, made = [], []
    for _ in range(repeats):
        units.append(plain())
        made.append(_run(lambda: attribute(loaded, x, method), module, dev))
    found = attribute(loaded, x, method)
    rows.append(_row(name, method, f"the {method} map", [s for s, _ in made], made[0][1], units))
    for row in rows:
        log(format_row(row))
    theirs = peers(loaded, x, found)
    for check, ours in checks(loaded, x, method, found, steps).items():
        whose, peer = theirs.get(check, (NO_GAMES, None))
        times, peer_times, units = [], [], []
        counts = peer_counts = None
        for _ in range(repeats):  # interleaved: ours, then the peer's, each repeat
            units.append(plain())
            seconds, counts = _run(ours, module, dev)
            times.append(seconds)
            if peer is not None:
                seconds, peer_counts = _run(peer, module, dev)
                peer_times.append(seconds)
        row = _row(name, method, check, times, counts, units)
        row["peer"] = whose
        if peer is not None:
            row.update(peer_s=statistics.median(peer_times), peer_forwards=peer_counts["forwards"],
                       peer_backwards=peer_counts["backwards"], peer_batching=batching(peer_counts))
            row["ratio"] = row["seconds"] / row["peer_s"]
        rows.append(row)
        log(format_row(row))
    return rows


def _row(model: str, method: str, check: str, times: list[float], counts: dict, units: list[float]) -> dict:
    """A row: the median seconds, and `x_forward` the median of each run's seconds over the plain forward
    measured right before it (`units`, one a run)."""
    ratios = [t / u if u > 0 else math.nan for t, u in zip(times, units)]
    return {"model": model, "method": method, "check": check, "forwards": counts["forwards"],
            "forward_calls": counts["forward_calls"], "largest_batch": counts["largest_batch"],
            "backwards": counts["backwards"], "batching": batching(counts), "seconds": statistics.median(times),
            "forward_s": statistics.median(units), "x_forward": statistics.median(ratios), "repeats": len(times)}


def format_header() -> str:
    return (f"{'check':<34}{'fwd':>6}{'bwd':>5}{'seconds':>10}{'x fwd':>9}   {'peer':<44}{'peer fwd':>9}"
            f"{'peer s':>9}{'ours/peer':>10}")


def format_row(r: dict) -> str:
    peer = r.get("peer", "")
    line = (f"{r['check']:<34}{r['forwards']:>6}{r['backwards']:>5}{r['seconds']:>9.2f}s{r['x_forward']:>8.1f}x   "
            f"{peer[:44]:<44}")
    if "peer_s" in r:
        line += f"{r['peer_forwards']:>9}{r['peer_s']:>8.2f}s{r['ratio']:>9.2f}x"
    return line


def main(models=("resnet50",), method: str = "gradcam", repeats: int = 1, steps: int = 50, device: str = "cpu",
         log=print) -> list[dict]:
    log(f"trust checks of one {method} map: torch threads {torch.get_num_threads()}, device {device}, median of "
        f"{repeats}, ours and the peer's interleaved; passes counted on the model's root module (fwd: batch items "
        f"forward, bwd: backward passes' items)")
    rows = []
    for name in models:
        log(f"{name}:")
        log(format_header())
        rows += bench_model(name, method, repeats, steps, device, log)
        for row in rows:
            if row["model"] == name and row["check"] not in ("plain forward",):
                log(f"  {row['check']}: {row['batching']}" + (f"; peer: {row['peer_batching']}"
                                                               if "peer_batching" in row else ""))
    return rows
