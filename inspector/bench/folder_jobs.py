"""What the atlas's and the concepts' benchmarks share: the model loaded on the device, a work folder of generated
JPEGs (removed after), its files as the model's preprocessing decodes them, and the yardstick both are measured
against: `plain`, the images decoded in batches (the folder jobs' own prefetching reader) and `model(x)` under
inference_mode, same batch size, no hooks."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np


def make_folder(folder: Path, count: int, size: int = 256, seed: int = 0) -> Path:
    """`count` JPEGs of smooth random shapes and noise, in two class folders."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:size, 0:size] / size
    for i in range(count):
        sub = folder / f"class{i % 2}"
        sub.mkdir(parents=True, exist_ok=True)
        a = np.zeros((size, size, 3))
        for _ in range(4):
            cy, cx, r = rng.random(3) * [1, 1, 0.4]
            a += np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (r * r + 0.01))[..., None] * rng.random(3)
        a = np.clip(a / a.max() * 255 + rng.normal(0, 12, a.shape), 0, 255).astype(np.uint8)
        Image.fromarray(a).save(sub / f"{i:04d}.jpg", quality=90)
    return folder


def load_on(model: str, device: str):
    """(the model, loaded with seed 0 unless it is the demo, on `device`; the torch device)."""
    from inspector.core.sources.devices import resolve_device
    from inspector.core.sources.loader import load_model

    loaded = load_model(model, seed=0) if model != "demo" else load_model(model)
    dev = resolve_device(device)
    loaded.module.to(dev)
    return loaded, dev


@dataclass
class BenchFolder:
    loaded: object
    dev: object
    work: Path  # removed after the bench
    data: Path  # the generated images
    files: list
    prep: object  # the model's preprocessing of a file

    def batches(self, batch: int, files: list | None = None) -> Iterator:
        """The decoded batches of `files` (all of them by default), as the folder jobs read them."""
        from inspector.core.folder_jobs import prefetched_batches

        files = self.files if files is None else files
        for _, groups, _ in prefetched_batches(files, self.prep, batch, np.arange(len(files))):
            for _, x in groups:
                yield x

    def plain(self, batch: int) -> None:
        """The yardstick: every batch decoded and through the model, forward only."""
        import torch

        from .timing import synchronize

        with torch.inference_mode():
            for x in self.batches(batch):
                self.loaded.module(x.to(self.dev))
        synchronize(self.dev)


@contextmanager
def bench_folder(loaded, dev, images: int, prefix: str) -> Iterator[BenchFolder]:
    """`images` generated JPEGs in a fresh work folder (named `prefix`…), removed when the bench is done."""
    from inspector.core.inputs.files import input_preprocess, list_images

    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        data = make_folder(work / "data", images)
        yield BenchFolder(loaded, dev, work, data, list_images(data).files,
                          input_preprocess(loaded.preprocess, loaded.input_shape))
    finally:
        shutil.rmtree(work, ignore_errors=True)
