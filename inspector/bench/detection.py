"""`bench --detection`: the detection rows, each against its plain-PyTorch baseline in the same process,
interleaved, median of `repeats`:

    per-box Grad-CAM (`attribute --method gradcam --target box:0`, the layer chosen automatically: an R-CNN's
        FPN level for the box, captured with the other levels its pooler reads)
        vs one plain forward with a hook at that layer + autograd.grad(scores[k], activation) + the CAM
    D-RISE masks per second (`attribute --method drise`, batched)
        vs a plain loop of forwards over the same masked images, one at a time, without gradients

Random weights (seed 0; their score threshold is 0, so every model detects) on a seeded 320 x 320 image.
"""

from __future__ import annotations

import statistics

import torch

from .timing import timed

MODELS = ("fasterrcnn_mobilenet_v3_large_320_fpn", "retinanet_resnet50_fpn")
SIZE = (320, 320)


def plain_gradcam(module, x: torch.Tensor, layer: str, k: int) -> torch.Tensor:
    """Grad-CAM of detection k's score at `layer` with a hook and autograd only (the baseline)."""
    kept = {}
    handle = module.get_submodule(layer).register_forward_hook(lambda _m, _i, out: kept.__setitem__("a", out))
    try:
        first = module([x[0]])[0]
    finally:
        handle.remove()
    order = torch.argsort(first["scores"].detach(), descending=True, stable=True)
    (grad,) = torch.autograd.grad(first["scores"][order[k]], kept["a"])
    return torch.relu((grad.mean(dim=(2, 3), keepdim=True) * kept["a"]).sum(dim=1))[0].detach()


def bench_model(name: str, repeats: int = 5, masks: int = 32, device: str = "cpu") -> dict:
    from inspector.core import load_model
    from inspector.core.attribution import attribute
    from inspector.core.attribution.drise import DEFAULTS, default_cell, make_masks

    loaded = load_model(name, seed=0)
    loaded.module.to(device)
    x = torch.rand(1, 3, *SIZE, generator=torch.Generator().manual_seed(0)).to(device)
    layer = attribute(loaded, x, "gradcam", "box:0").layer  # the default: an R-CNN's box at its FPN level
    ours_cam, plain_cam = [], []
    for _ in range(repeats + 1):  # the first of each is a warm-up
        ours_cam.append(timed(lambda: attribute(loaded, x, "gradcam", "box:0"), x.device))
        plain_cam.append(timed(lambda: plain_gradcam(loaded.module, x, layer, 0), x.device))
    cell = default_cell(x)
    shaped = make_masks(masks, SIZE, cell, DEFAULTS["probability"], torch.Generator().manual_seed(1)).to(device)

    def loop() -> None:
        with torch.no_grad():
            for i in range(masks):
                loaded.module(x * shaped[i:i + 1])

    ours_drise, plain_drise = [], []
    for _ in range(min(repeats, 3) + 1):
        ours_drise.append(timed(lambda: attribute(loaded, x, "drise", "box:0", options={"masks": masks, "seed": 1}),
                                x.device))
        plain_drise.append(timed(loop, x.device))
    med = lambda values: statistics.median(values[1:])  # noqa: E731 - the warm-up left out
    return {"model": name, "layer": layer, "gradcam_s": med(ours_cam), "plain_gradcam_s": med(plain_cam),
            "gradcam_ratio": med(ours_cam) / med(plain_cam), "masks": masks,
            "drise_masks_per_s": masks / med(ours_drise), "plain_masks_per_s": masks / med(plain_drise),
            "drise_ratio": med(plain_drise) / med(ours_drise)}


def format_row(row: dict) -> str:
    return (f"{row['model']:<40} gradcam {row['gradcam_s'] * 1000:8.0f} ms vs plain {row['plain_gradcam_s'] * 1000:8.0f}"
            f" ms = {row['gradcam_ratio']:.2f}x (target <= 1.3)   drise {row['drise_masks_per_s']:6.2f} masks/s vs "
            f"plain loop {row['plain_masks_per_s']:6.2f} = {row['drise_ratio']:.2f}x (target >= 0.9)")


def main(models=MODELS, repeats: int = 5, masks: int = 32, device: str = "cpu", log=print) -> list[dict]:
    rows = []
    for name in models:
        row = bench_model(name, repeats, masks, device)
        log(format_row(row))
        rows.append(row)
    return rows
