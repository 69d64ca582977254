"""`bench --attribution`: integrated gradients, SmoothGrad and occlusion against captum's, interleaved in one
process on the same model, input, target and settings: seconds (median of `repeats`), the ratio ours/captum
(and the lowest and highest of each repeat's own ratio, its two runs back to back: a 2-core machine shared with
others moves the figures by a tenth between runs),
the peak memory each took above what was held before (resident memory sampled every 5 ms on CPU; CUDA's
peak allocated on a GPU), and how far the maps differ (relative L2). Captum is the reference library, a
bench-only dependency (the dev group); our batch is ours to choose (inspector.core.attribution.passes.batching), captum's is
the one its users are told to set.

    captum IntegratedGradients(n_steps=50, internal_batch_size=10)   vs  attribute --method ig --steps 50
    captum NoiseTunnel(Saliency)(nt_samples=25, nt_samples_batch_size=5, stdevs=0.15 * range)
                                                                     vs  --method smoothgrad --samples 25
    captum Occlusion(sliding_window_shapes=(3, 32, 32), strides=(3, 16, 16), perturbations_per_eval=16)
                                                                     vs  --method occlusion --window 32 --stride 16

`against="whole"` times ours against
ours with every occluded copy run whole (`core.occlusion_regions.whole_copies`): what computing the first
layers on the windows' boxes gains.
"""

from __future__ import annotations

import statistics
import threading
import time
from typing import Callable

import numpy as np
import psutil
import torch

from .timing import synchronize

METHODS = ("ig", "smoothgrad", "occlusion")


class PeakMemory:
    """The largest resident memory (CPU) or allocated memory (CUDA) above the start, while in the block."""

    def __init__(self, device: torch.device) -> None:
        self.device, self.peak = device, 0

    def __enter__(self):
        if self.device.type == "cuda":
            synchronize(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
            self.start = torch.cuda.memory_allocated(self.device)
            return self
        process = psutil.Process()
        self.start, self.top, self.done = process.memory_info().rss, 0, threading.Event()

        def sample() -> None:
            while not self.done.is_set():
                self.top = max(self.top, process.memory_info().rss)
                self.done.wait(0.005)

        self.thread = threading.Thread(target=sample, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.device.type == "cuda":
            synchronize(self.device)
            self.peak = torch.cuda.max_memory_allocated(self.device) - self.start
            return
        self.done.set()
        self.thread.join()
        self.peak = max(0, self.top - self.start)


def _timed(run: Callable[[], np.ndarray], device: torch.device) -> tuple[float, int, np.ndarray]:
    with PeakMemory(device) as memory:
        start = time.perf_counter()
        found = run()
        synchronize(device)
        seconds = time.perf_counter() - start
    return seconds, memory.peak, found


def pairs(loaded, x: torch.Tensor, target: int, method: str, against: str = "captum"):
    """(ours, captum's): two functions returning the (C, H, W) map, same settings; against "whole": (ours, ours
    with every occluded copy run whole)."""
    if against == "whole":
        from inspector.core.attribution.passes.regions import whole_copies

        ours, _ = pairs(loaded, x, target, method)

        def plain():
            with whole_copies():
                return ours()
        return ours, plain
    from captum.attr import IntegratedGradients, NoiseTunnel, Occlusion, Saliency

    from inspector.core.attribution import attribute

    module = loaded.module
    if method == "ig":
        return (lambda: attribute(loaded, x, "ig", target, options={"steps": 50}).map,
                lambda: IntegratedGradients(module).attribute(x, target=target, n_steps=50,
                                                              internal_batch_size=10)[0].detach().cpu().numpy())
    if method == "smoothgrad":
        sigma = 0.15 * float(x.max() - x.min())

        def captum_smoothgrad():
            found = NoiseTunnel(Saliency(module)).attribute(x, nt_type="smoothgrad", nt_samples=25,
                                                            nt_samples_batch_size=5, stdevs=sigma, target=target)
            return found[0].detach().abs().amax(dim=0).cpu().numpy()  # saliency's max over channels, as ours

        def ours():  # captum's Saliency is |grad| per channel; ours takes the max over channels of each sample
            return attribute(loaded, x, "smoothgrad", target, options={"samples": 25, "noise": 0.15, "seed": 0}).map

        return ours, captum_smoothgrad
    if method == "occlusion":
        return (lambda: attribute(loaded, x, "occlusion", target, options={"window": 32, "stride": 16}).map,
                lambda: Occlusion(module).attribute(x, sliding_window_shapes=(3, 32, 32), strides=(3, 16, 16),
                                                    target=target, baselines=0,
                                                    perturbations_per_eval=16)[0].detach().cpu().numpy())
    raise ValueError(method)


def bench_model(name: str, methods=METHODS, repeats: int = 1, device: str = "cpu", log=print,
                against: str = "captum") -> list[dict]:
    """One row per method on `name` (random weights, seed 0; the demo's own), interleaving ours and captum's
    (or `against` "whole": ours with every occluded copy run whole) `repeats` times. The other's figures are under
    the captum keys either way, and `against` says whose they are."""
    from inspector.core import load_model, resolve_device

    torch.manual_seed(0)
    loaded = load_model(name) if name == "demo" else load_model(name, "random", seed=0)
    for layer in loaded.module.modules():  # a zero-initialised head (torchvision's ViT) makes every map zero
        if isinstance(layer, torch.nn.Linear) and not layer.weight.any():
            torch.nn.init.normal_(layer.weight, std=0.02, generator=torch.Generator().manual_seed(2))
            log(f"{name}: its zero-initialised {type(layer).__name__} head drawn from N(0, 0.02^2), seed 2")
    dev = resolve_device(device)
    loaded.module.to(dev).eval()
    shape = loaded.input_shape or (1, 3, 224, 224)
    x = torch.randn(shape, generator=torch.Generator().manual_seed(1)).to(dev)
    with torch.no_grad():
        target = int(loaded.module(x).argmax(dim=1)[0])
    rows = []
    for method in methods:
        ours, theirs = pairs(loaded, x, target, method, against)
        times: dict[str, list[float]] = {"ours": [], "captum": []}
        peaks: dict[str, list[int]] = {"ours": [], "captum": []}
        maps = {}
        for _ in range(repeats):
            for who, run in (("ours", ours), ("captum", theirs)):
                seconds, peak, maps[who] = _timed(run, dev)
                times[who].append(seconds)
                peaks[who].append(peak)
        a, b = (np.asarray(maps[w], np.float64) for w in ("ours", "captum"))
        row = {"model": name, "method": method, "ours_s": statistics.median(times["ours"]),
               "captum_s": statistics.median(times["captum"]), "ours_peak_mb": max(peaks["ours"]) / 2**20,
               "captum_peak_mb": max(peaks["captum"]) / 2**20,
               "rel_l2": float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30)), "device": dev.type,
               "against": against}
        row["ratio"] = row["ours_s"] / row["captum_s"]
        # each repeat's own ratio (its two runs back to back): how far this machine moved the figure meanwhile
        row["pair_ratios"] = [o / t for o, t in zip(times["ours"], times["captum"])]
        rows.append(row)
        log(format_row(row))
    return rows


def format_header(against: str = "captum") -> str:
    return (f"{'model':<20}{'method':<12}{'ours':>9}{against:>9}{'ratio':>8}{'pairs':>13}{'ours peak':>12}"
            f"{against[:6] + ' peak':>13}{'rel L2':>10}")


def format_row(r: dict) -> str:
    pairs = r.get("pair_ratios") or [r["ratio"]]
    spread = f"{min(pairs):.2f}-{max(pairs):.2f}x"
    return (f"{r['model']:<19} {r['method']:<12}{r['ours_s']:>8.2f}s{r['captum_s']:>8.2f}s{r['ratio']:>7.2f}x"
            f"{spread:>13}{r['ours_peak_mb']:>9.0f} MB{r['captum_peak_mb']:>10.0f} MB{r['rel_l2']:>10.2g}")


def main(models=("resnet50", "vit_b_16"), methods=METHODS, repeats: int = 1, device: str = "cpu",
         log=print, against: str = "captum") -> list[dict]:
    log(f"attribution against {against}: torch threads {torch.get_num_threads()}, device {device}, "
        f"median of {repeats}, interleaved")
    log(format_header(against))
    return [row for name in models for row in bench_model(name, methods, repeats, device, log, against)]
