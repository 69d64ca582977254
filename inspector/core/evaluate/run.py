"""`run_evaluation`: the job's start, its run (here or on Ray) and its results."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import numpy as np

from ..common.arguments import checked
from ..common.errors import SpecError
from ..folder_jobs import check_address, run_job
from ..sources.devices import resolve_device
from ..sources.loaded import LoadedModel, detects
from ..storage.outputs import output_folder
from .job import evaluation_job
from .local import run_here
from .settings import CONFIDENCE, DEFAULT_PROTOCOL, Settings
from .store import FOLDER, LOCK_FILE, EvaluationError, checkpoint_of, write_results
from .summary import summarise

ProgressFn = Callable[[int, int], None]
CancelFn = Callable[[], bool]


@checked
def run_evaluation(loaded: LoadedModel, data_dir: str | os.PathLike, methods: str | list[str] | tuple[str, ...],
                   metrics: str | list[str] | tuple[str, ...], out_dir: str | os.PathLike, *,
                   protocol: str = DEFAULT_PROTOCOL, steps: int | None = None, options: dict | None = None, batch: int = 4,
                   device: str = "cpu", progress: ProgressFn | None = None, cancel: CancelFn | None = None,
                   use_ray: bool = False, ray_address: str | None = None, restart: bool = False) -> dict:
    """Evaluate `methods`' maps (names, comma-separated or a list) by `metrics` on every image in `data_dir` and
    write the values and their summary to `out_dir`; returns summary.json's content. `protocol` (records.protocols)
    and `steps` (its K; None: the protocol's own) are deletion's and insertion's, `options` the other metrics' own
    settings. Cancelled (`cancel()` true between
    images or inside a map that runs in passes): saves its state and raises RunCancelled; the same call resumes
    there (`restart=True` starts over). Nothing is written when the arguments are wrong (an unknown name, no
    images, an out_dir that is a file or another job's, a device or Ray address that is not there). One job
    evaluates in a folder at a time (a lock file); the output folder, when inside `data_dir`, is not data."""
    out = output_folder(out_dir)
    settings = Settings(protocol, steps, tuple(sorted((options or {}).items())))
    job = evaluation_job(loaded, data_dir, methods, metrics, settings, batch, exclude=out)
    if detects(loaded):
        raise SpecError("evaluate scores the maps of a classifier's class; this model is a detector (explain its "
                        "boxes with `attribute`).")
    resolve_device(device)
    if ray_address:
        check_address(ray_address)

    def work() -> tuple[np.ndarray, np.ndarray, list[dict]]:
        if use_ray or ray_address:
            from .ray_pipeline import run_on_ray

            return run_on_ray(loaded, job, out, device, progress, cancel, ray_address)
        return run_here(loaded, job, out, device, progress, cancel)

    return run_job(out, FOLDER, job.key, job.arguments, restart, work,
                   lambda done: _finish(loaded, job, out, done[1], done[2]), checkpoint_of(job, out).saved,
                   len(job.names), progress, LOCK_FILE)


def _finish(loaded, job, out: Path, values: np.ndarray, skipped: list[dict]) -> dict:
    skipped = sorted(skipped, key=lambda s: s["path"])
    index = {name: i for i, name in enumerate(job.names)}
    read = np.ones(len(job.names), bool)
    read[[index[s["path"]] for s in skipped]] = False
    if not read.any():
        raise EvaluationError(f"None of the {len(job.names)} files in {job.images.root} could be read as an image "
                              f"({skipped[0]['path']}: {skipped[0]['reason']}).")
    head = {"model": loaded.source, "weights": loaded.weights, "seed": loaded.seed,
            "data": job.arguments["data"], "methods": list(job.methods), "metrics": list(job.metrics),
            "method_seed": job.arguments["method_seed"], "settings": job.settings.as_dict(),
            "confidence": CONFIDENCE}
    rows = summarise(values[read], job.columns, CONFIDENCE)
    result = write_results(job, out, values, read, skipped, head, rows)
    checkpoint_of(job, out).clear()
    return result
