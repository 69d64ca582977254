"""What identifies an evaluation over a folder: the model (source, weights, seed), the data (every image's relative
path, size and modification time), the preprocessing, the methods, the metrics and their settings. Its key is a
hash of them; the folder it writes is the evaluation's (`store`)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from ..folder_jobs import listing
from ..inputs.files import ImageSet, input_preprocess, list_images
from ..sources.preprocess import Preprocess
from .metrics import columns
from .settings import METHOD_SEED, Settings, check_batch, check_request


@dataclass(frozen=True)
class EvaluationJob:
    images: ImageSet
    names: tuple[str, ...]  # each image's path relative to the data folder, in the listing's order
    methods: tuple[str, ...]
    metrics: tuple[str, ...]
    settings: Settings
    columns: tuple[tuple[str, str, str], ...]  # (method, metric, number) of each value an image gives
    preprocess: Preprocess
    batch: int
    arguments: dict
    key: str


def evaluation_job(loaded, data_dir, methods, metrics, settings: Settings, batch: int,
                   exclude: Path | None = None) -> EvaluationJob:
    """Check the arguments (SpecError, InputError) and work out the job's key; writes nothing. `exclude`: a folder
    whose files are not data (the job's own output folder, when it is inside the data)."""
    methods, metrics, settings = check_request(methods, metrics, settings)
    check_batch(batch)
    images = list_images(data_dir, exclude=exclude)
    prep = input_preprocess(loaded.preprocess, loaded.input_shape)
    files = listing(images)
    arguments = {"model": loaded.source, "weights": loaded.weights, "seed": loaded.seed,
                 "data": str(Path(images.root).resolve()), "preprocess": prep.to_dict(), "methods": list(methods),
                 "method_seed": METHOD_SEED, "metrics": list(metrics), "settings": settings.as_dict()}
    digest = hashlib.sha256(json.dumps([arguments, files], sort_keys=True).encode()).hexdigest()[:16]
    return EvaluationJob(images, tuple(f[0] for f in files), methods, metrics, settings, columns(methods, metrics),
                         prep, int(batch), arguments, digest)
