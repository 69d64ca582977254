"""What identifies a job over a folder of images (the atlas's; the concepts' builds on it).

A job is keyed by a hash of what decides its result: the model (source, weights, seed), the data
(every image's relative path, size and modification time), the selected layers, K, the batch
size and the preprocessing. The folder it writes is its kind's store.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from ..common.errors import SpecError
from ..inputs.files import ImageSet, input_preprocess, list_images
from ..sources.layers import LayerTree
from ..sources.preprocess import Preprocess
from ..records.tokens import TokenGrid
from ..sources.grids import token_grid
from .arguments import check_counts


@dataclass(frozen=True)
class FolderJob:
    images: ImageSet
    layers: tuple[str, ...]
    top: int
    batch: int
    preprocess: Preprocess
    grid: TokenGrid | None
    arguments: dict
    key: str
    names: tuple[str, ...] = ()  # each image's path relative to the data folder, in the listing's order


def job_of(loaded, tree: LayerTree, data_dir, layers: str, top: int, batch: int,
           exclude: Path | None = None) -> FolderJob:
    """Check the arguments (SpecError, InputError) and work out the job's key; writes nothing.
    `tree`: the loaded model's layer tree, which `layers` select from; `exclude`: a folder whose
    files are not data (the job's own output folder, when it is inside the data)."""
    check_counts(top, batch)
    if isinstance(layers, (list, tuple)):
        layers = ",".join(layers)
    paths = tuple(tree.select(layers))
    if not paths:
        raise SpecError(f"--layers {layers!r} selects no layer.")
    images = list_images(data_dir, exclude=exclude)
    prep = input_preprocess(loaded.preprocess, loaded.input_shape)
    files = listing(images)
    arguments = {"model": loaded.source, "weights": loaded.weights, "seed": loaded.seed,
                 "data": str(Path(images.root).resolve()), "layers": list(paths), "top": int(top),
                 "batch": int(batch), "preprocess": prep.to_dict()}
    digest = hashlib.sha256(json.dumps([arguments, files], sort_keys=True).encode()).hexdigest()[:16]
    return FolderJob(images, paths, int(top), int(batch), prep, token_grid(loaded.module), arguments, digest,
                    tuple(f[0] for f in files))


def listing(images: ImageSet) -> list[list]:
    """[relative path, size in bytes, modification time in ns] of every image: what a job's key holds of the data."""
    return [[images.relative(p), *_size_and_time(p)] for p in images.files]


def _size_and_time(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
    except OSError:  # a broken link: listed, and skipped with its reason when read
        st = path.lstat()
    return st.st_size, st.st_mtime_ns

