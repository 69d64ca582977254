"""What identifies an atlas job, and what it keeps in its output folder between runs.

A job is keyed by a hash of what decides its result: the model (source, weights, seed), the data
(every image's relative path, size and modification time), the selected layers, K, the batch
size and the preprocessing. OUT_DIR/atlas.job.json names the job the folder belongs to; the
state of an unfinished job is OUT_DIR/atlas.partial.npz + .json, written atomically.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .atlas_topk import LayerTop
from .errors import AtlasError, SpecError
from .inputs import ImageSet, input_preprocess, list_images
from .preprocess import Preprocess
from .tokens import TokenGrid, token_grid

JOB_FILE = "atlas.job.json"
PARTIAL = "atlas.partial"


@dataclass(frozen=True)
class AtlasJob:
    images: ImageSet
    layers: tuple[str, ...]
    top: int
    batch: int
    preprocess: Preprocess
    grid: TokenGrid | None
    arguments: dict
    key: str


def job_of(loaded, data_dir, layers: str, top: int, batch: int) -> AtlasJob:
    """Check the arguments (SpecError, InputError) and work out the job's key; writes nothing."""
    from .api import tree_of

    if int(top) < 1 or int(batch) < 1:
        raise SpecError(f"--top and --batch must be at least 1 (got top {top}, batch {batch}).")
    if isinstance(layers, (list, tuple)):
        layers = ",".join(layers)
    paths = tuple(tree_of(loaded).select(layers))
    if not paths:
        raise SpecError(f"--layers {layers!r} selects no layer.")
    images = list_images(data_dir)
    prep = input_preprocess(loaded.preprocess, loaded.input_shape)
    files = [[images.relative(p), *_size_and_time(p)] for p in images.files]
    arguments = {"model": loaded.source, "weights": loaded.weights, "seed": loaded.seed,
                 "data": str(Path(images.root).resolve()), "layers": list(paths), "top": int(top),
                 "batch": int(batch), "preprocess": prep.to_dict()}
    digest = hashlib.sha256(json.dumps([arguments, files], sort_keys=True).encode()).hexdigest()[:16]
    return AtlasJob(images, paths, int(top), int(batch), prep, token_grid(loaded.module), arguments, digest)


def _size_and_time(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns


def check_out_dir(out: Path, job: AtlasJob) -> dict | None:
    """The finished atlas when `out` already holds this job's; None to go on (the job file is then
    written). AtlasError, with nothing changed, when `out` belongs to another job."""
    from .atlas import ATLAS_FILE, read_atlas

    if out.exists() and not out.is_dir():
        raise AtlasError(f"--out {out} is a file; the atlas needs a folder.")
    job_file, atlas_file = out / JOB_FILE, out / ATLAS_FILE
    if job_file.is_file():
        theirs = read_json(job_file)
        if theirs.get("key") != job.key:
            args = theirs.get("arguments", {})
            what = "an unfinished atlas" if not atlas_file.is_file() else "the atlas"
            raise AtlasError(f"{out} holds {what} of a different job (model {args.get('model')}, data "
                             f"{args.get('data')}, layers {', '.join(args.get('layers', []))}, top "
                             f"{args.get('top')}); choose another --out or delete that folder.")
        if atlas_file.is_file() and not (out / f"{PARTIAL}.json").is_file():
            return read_atlas(out)
    elif atlas_file.is_file():
        raise AtlasError(f"{out} already holds an atlas.json that this job did not make; choose another --out "
                         f"or delete it.")
    out.mkdir(parents=True, exist_ok=True)
    write_json(job_file, {"key": job.key, "arguments": job.arguments})
    return None


class Checkpoint:
    """The saved state of an unfinished job: which images are done, the layers' top K and statistics, skips."""

    def __init__(self, out: Path, job: AtlasJob) -> None:
        self.out, self.job = out, job
        self.arrays, self.meta = out / f"{PARTIAL}.npz", out / f"{PARTIAL}.json"

    def load(self) -> tuple[np.ndarray, dict[str, LayerTop], list[dict]]:
        """(which images are done, the layers' state, the skipped files) -- nothing done when there is no state."""
        nothing = np.zeros(len(self.job.images), bool), {}, []
        if not self.meta.is_file() or not self.arrays.is_file():
            return nothing
        meta = read_json(self.meta)
        if meta.get("key") != self.job.key:
            return nothing
        with np.load(self.arrays, allow_pickle=False) as arrays:
            tops = {path: LayerTop.from_state(arrays, f"L{i}") for i, path in enumerate(self.job.layers)
                    if f"L{i}/shape" in arrays}
            done = np.array(arrays["done"], bool)
        return done, tops, list(meta["skipped"])

    def save(self, done: np.ndarray, tops: dict[str, LayerTop], skipped: list[dict]) -> None:
        arrays = {"done": np.asarray(done, bool)}
        for i, path in enumerate(self.job.layers):
            if path in tops:
                arrays.update(tops[path].state(f"L{i}"))
        tmp = self.arrays.with_name(self.arrays.name + ".tmp.npz")
        np.savez(tmp, **arrays)
        os.replace(tmp, self.arrays)
        write_json(self.meta, {"key": self.job.key, "done": int(np.count_nonzero(done)), "skipped": skipped})

    def clear(self) -> None:
        for path in (self.meta, self.arrays):
            path.unlink(missing_ok=True)


def write_json(path: Path, value) -> None:
    """Atomically (a temporary file renamed); compact, so that the C encoder writes a large atlas quickly."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(value, separators=(",", ":")) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AtlasError(f"Cannot read {path}: {exc}") from None


