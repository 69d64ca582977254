"""The atlas's benchmark: its throughput against plain batched inference, same process, interleaved.

Variants, over the same folder of generated JPEGs (decoded, resized and cropped as the model's
preprocessing says), after a warm-up, `repeats` times in turn:
  plain    the images decoded in batches (the atlas's own prefetching reader) and `model(x)` under
           inference_mode: forward only, same batch size, no hooks (`folder_jobs.BenchFolder.plain`)
  forward  `model(x)` alone on batches decoded beforehand (what the model itself costs)
  atlas    `run_atlas` on every conv layer into a fresh folder, timed until its progress says every
           image is done (the pass over the data, without thumbnails); the thumbnails (`thumbs`: a
           cost per channel and K, plus measuring the receptive fields, not per image) are timed once
Throughput ratios are of medians; atlas/plain >= 0.8 is the target.
"""

from __future__ import annotations

import gc
import shutil
import statistics
import time
from typing import Callable

from .folder_jobs import bench_folder, load_on


def bench_atlas(model: str = "resnet18", images: int = 64, batch: int = 16, top: int = 9, repeats: int = 3,
                device: str = "cpu", log: Callable[[str], None] = print) -> dict:
    import torch

    from inspector.core.atlas import run_atlas
    from inspector.core.sources.loaded import tree_of

    from .timing import synchronize

    loaded, dev = load_on(model, device)
    convs = tree_of(loaded).convolutions()
    with bench_folder(loaded, dev, images, "atlas-bench-") as folder:
        decoded = list(folder.batches(batch))

        def forward():
            with torch.inference_mode():
                for x in decoded:
                    loaded.module(x.to(dev))
            synchronize(dev)

        runs = iter(range(10**6))
        pass_end: list[float] = []

        def atlas():
            out = folder.work / f"out{next(runs)}"
            mark = {}
            run_atlas(loaded, folder.data, ",".join(convs), top, out, batch=batch, device=device, thumbnails=thumbs,
                      progress=lambda d, t: mark.setdefault("end", time.perf_counter()) if d == t else None)
            pass_end.append(mark["end"])
            shutil.rmtree(out, ignore_errors=True)

        def plain():
            folder.plain(batch)

        variants = {"plain": plain, "forward": forward, "atlas": atlas}
        seconds: dict[str, list[float]] = {k: [] for k in (*variants, "thumbs")}
        thumbs = True
        start = time.perf_counter()
        atlas()  # warm-up, with thumbnails: their time once
        seconds["thumbs"].append(time.perf_counter() - pass_end[-1])
        thumbs = False
        for fn in (plain, forward):  # warm-up
            fn()
        for _ in range(repeats):
            for key, fn in variants.items():
                gc.collect()
                start = time.perf_counter()
                fn()
                end = time.perf_counter()
                if key == "atlas":
                    seconds["atlas"].append(pass_end[-1] - start)
                else:
                    seconds[key].append(end - start)
    med = {k: statistics.median(v) for k, v in seconds.items()}
    channels = sum(s[1] for s in (l.output_shapes[0] for l in tree_of(loaded) if l.path in convs))
    row = {"model": model, "conv_layers": len(convs), "channels": channels, "images": images, "batch": batch,
           "top": top, "device": str(dev), "median_s": med,
           "images_per_s": {k: images / med[k] for k in ("plain", "forward", "atlas")},
           "atlas/plain": med["plain"] / med["atlas"], "atlas/forward": med["forward"] / med["atlas"],
           "thumbnails_s": med["thumbs"]}
    log(f"{'model':<12}{'convs':>6}{'channels':>9}{'images':>7}{'batch':>6}{'plain img/s':>13}{'forward img/s':>15}"
        f"{'atlas img/s':>13}{'atlas/plain':>13}{'atlas/forward':>15}{'thumbnails s':>14}")
    ips = row["images_per_s"]
    log(f"{model:<12}{len(convs):>6}{channels:>9}{images:>7}{batch:>6}{ips['plain']:>13.1f}{ips['forward']:>15.1f}"
        f"{ips['atlas']:>13.1f}{row['atlas/plain']:>12.2f}x{row['atlas/forward']:>14.2f}x{med['thumbs']:>14.1f}")
    return row
