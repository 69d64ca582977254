"""`network-inspector bench --concepts`: what learning and reading concepts cost, against the model alone.

Over one folder of generated JPEGs (`folder_jobs.bench_folder`, as the atlas bench's), same process, after a
warm-up, `repeats` times in turn:
  plain    the images decoded in batches (the folder jobs' prefetching reader) and `model(x)` under inference_mode,
           same batch size, no hooks (`BenchFolder.plain`, the atlas bench's yardstick too)
  concepts `learn_concepts` (K concepts of `layer`, NMF, no pictures) into a fresh folder: its activation pass
           (until its progress says every image is done), its fit (the epochs of MiniBatchNMF), and the
           measures (held-out variance against PCA, each concept's top images)
pass/plain is the ratio of the medians' rates (>= 0.9 is the issue's target). Then the Concepts view for one
image: `read_concepts` with a target (coefficients, maps and relevance) and `concept_relevance_map` of the
most relevant concept, each against one plain forward + backward to the input (the median of `view_repeats`).
"""

from __future__ import annotations

import gc
import statistics
import time
from pathlib import Path
from typing import Callable

from .folder_jobs import bench_folder, load_on

#: a model's layer when none is named
LAYERS = {"demo": "relu3"}


def bench_concepts(model: str = "resnet50", layer: str | None = None, images: int = 200, k: int = 32,
                   batch: int = 16, repeats: int = 1, view_repeats: int = 5, device: str = "cpu",
                   log: Callable[[str], None] = print) -> dict:
    from inspector.core.concepts import (
        concept_relevance_map,
        learn_concepts,
        load_dictionary,
        read_concepts,
    )

    layer = layer or LAYERS.get(model, "layer4")
    loaded, dev = load_on(model, device)
    runs = iter(range(10**6))
    seconds: dict[str, list[float]] = {k: [] for k in ("plain", "pass", "fit", "measure", "total")}
    with bench_folder(loaded, dev, images, "concepts-bench-") as folder:

        def concepts() -> Path:
            out = folder.work / f"out{next(runs)}"
            marks: dict[str, float] = {}

            def progress(stage: str, done: int, total: int) -> None:
                now = time.perf_counter()
                marks.setdefault(f"{stage}_start", now)
                if stage == "pass" and done == total:
                    marks.setdefault("pass_end", now)

            start = time.perf_counter()
            learn_concepts(loaded, folder.data, layer, out, method="nmf", k=k, batch=batch, device=device,
                           progress=progress, pictures=False)
            end = time.perf_counter()
            fit_start = marks.get("fit_start", marks["pass_end"])
            measure_start = marks.get("measure_start", end)
            seconds["pass"].append(marks["pass_end"] - start)
            seconds["fit"].append(measure_start - fit_start)
            seconds["measure"].append(end - measure_start)
            seconds["total"].append(end - start)
            return out

        folder.plain(batch)  # warm-up
        for _ in range(repeats):
            gc.collect()
            start = time.perf_counter()
            folder.plain(batch)
            seconds["plain"].append(time.perf_counter() - start)
            gc.collect()
            kept = concepts()
        dictionary = load_dictionary(kept)
        x = next(folder.batches(1, folder.files[:1]))
        view = _view_times(loaded, x.to(dev), dictionary, dev, view_repeats, read_concepts, concept_relevance_map)
    med = {name: statistics.median(v) for name, v in seconds.items()}
    row = {"model": model, "layer": layer, "k": k, "images": images, "batch": batch, "device": str(dev),
           "repeats": repeats, "median_s": med,
           "images_per_s": {"plain": images / med["plain"], "pass": images / med["pass"]},
           "pass/plain": med["plain"] / med["pass"], "view": view}
    for line in report(row):
        log(line)
    return row


def _view_times(loaded, x, dictionary, dev, repeats: int, read_concepts, relevance_map) -> dict:
    """Median seconds of the Concepts view's calls for one image and of one plain forward + backward."""
    import torch

    from .timing import timed

    with torch.no_grad():
        target = int(loaded.module(x).reshape(1, -1).argmax(1))

    def plain():
        xx = x.detach().clone().requires_grad_(True)
        logits = loaded.module(xx).reshape(1, -1)
        torch.autograd.grad(logits[0, target], [xx])

    reading = read_concepts(loaded, x, dictionary, target=target, device=dev)
    concept = int(reading.relevance.argmax())
    calls = {"plain forward+backward": plain,
             "read_concepts": lambda: read_concepts(loaded, x, dictionary, target=target, device=dev),
             "concept_relevance_map": lambda: relevance_map(loaded, x, dictionary, concept, target, device=dev)}
    for fn in calls.values():  # warm-up
        fn()
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeats):
        for name, fn in calls.items():
            times[name].append(timed(fn, dev))
    med = {name: statistics.median(v) for name, v in times.items()}
    base = med["plain forward+backward"]
    return {"median_s": med, "ratio_to_plain": {name: s / base for name, s in med.items()}, "target": target,
            "concept": concept}


def report(row: dict) -> list[str]:
    med, ips = row["median_s"], row["images_per_s"]
    lines = [f"{'model':<10}{'layer':>8}{'K':>4}{'images':>7}{'batch':>6}{'plain img/s':>13}{'pass img/s':>12}"
             f"{'pass/plain':>12}{'pass s':>8}{'fit s':>8}{'measure s':>11}{'total s':>9}",
             f"{row['model']:<10}{row['layer']:>8}{row['k']:>4}{row['images']:>7}{row['batch']:>6}"
             f"{ips['plain']:>13.1f}{ips['pass']:>12.1f}{row['pass/plain']:>11.2f}x{med['pass']:>8.1f}"
             f"{med['fit']:>8.1f}{med['measure']:>11.1f}{med['total']:>9.1f}",
             "", f"{'the Concepts view, one image':<32}{'ms':>9}{'x plain':>9}"]
    view = row["view"]
    for name, seconds in view["median_s"].items():
        lines.append(f"{name:<32}{seconds * 1000:>9.1f}{view['ratio_to_plain'][name]:>8.2f}x")
    return lines
