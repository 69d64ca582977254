"""`bench --ig-auto`: integrated gradients with steps auto against captum at the steps auto chose.

For each model (random weights, seed 0) and each of the first `images` bundled samples, ours with
`steps="auto"` (the nested trapezoid until the completeness gap is within 1% of |f(x) - f(baseline)|, at most 512
points) and captum's `IntegratedGradients(method="riemann_trapezoid", n_steps=<the points auto used>)`, the same
batch, interleaved in one process; each row gives the steps, the gap and both times. Auto takes no extra
forward or backward: each level's gradients are reused by the next, so its points are its passes.
"""

from __future__ import annotations

import statistics
import time

import torch

BATCH = 8  # path points a pass, both


def bench_ig_auto(models=("resnet50", "mobilenet_v3_large", "vit_b_16"), images: int = 3, repeats: int = 1,
                  device: str = "cpu", log=print) -> list[dict]:
    from captum.attr import IntegratedGradients

    from inspector.core import load_input, load_model, resolve_device
    from inspector.core.attribution import attribute
    from inspector.core.inputs.samples import list_samples

    dev = resolve_device(device)
    log(f"ig steps auto against captum at the same steps: torch threads {torch.get_num_threads()}, device {dev}, "
        f"median of {repeats}, interleaved, {BATCH} points a pass")
    log(f"{'model':<20}{'input':<22}{'steps':>6}{'gap':>10}{'auto':>9}{'captum':>9}{'ratio':>8}")
    rows = []
    for name in models:
        loaded = load_model(name) if name == "demo" else load_model(name, "random", seed=0)
        for layer in loaded.module.modules():  # a zero-initialised head (torchvision's ViT) makes every map zero
            if isinstance(layer, torch.nn.Linear) and not layer.weight.any():
                torch.nn.init.normal_(layer.weight, std=0.02, generator=torch.Generator().manual_seed(2))
        loaded.module.to(dev).eval()
        for sample in list_samples()[:images]:
            x = load_input(f"sample:{sample}", loaded.preprocess, loaded.input_shape).to(dev)
            with torch.no_grad():
                target = int(loaded.module(x).argmax(dim=1)[0])
            ours, theirs, found = [], [], None
            for _ in range(repeats):
                start = time.perf_counter()
                found = attribute(loaded, x, "ig", target, options={"steps": "auto", "batch": BATCH})
                ours.append(time.perf_counter() - start)
                steps = dict(found.details)["steps"]
                start = time.perf_counter()
                IntegratedGradients(loaded.module).attribute(x, target=target, n_steps=steps,
                                                             method="riemann_trapezoid", internal_batch_size=BATCH)
                theirs.append(time.perf_counter() - start)
            row = {"model": name, "input": sample, "steps": steps, "gap": found.completeness_gap,
                   "delta": dict(found.details)["f(x) - f(baseline)"], "auto_s": statistics.median(ours),
                   "captum_s": statistics.median(theirs), "device": dev.type}
            row["ratio"] = row["auto_s"] / row["captum_s"]
            rows.append(row)
            log(f"{name:<20}{sample:<22}{steps:>6}{row['gap']:>10.3g}{row['auto_s']:>8.2f}s{row['captum_s']:>8.2f}s"
                f"{row['ratio']:>7.2f}x")
    return rows
