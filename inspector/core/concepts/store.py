"""A concepts folder, the one place that knows its layout, and the state of an unfinished job.

    OUT_DIR/dictionary.safetensors        the dictionary (dictionary.load_dictionary)
    OUT_DIR/concepts.json                 the record: job, data listing, fit metrics, per-concept stats and tops
    OUT_DIR/concepts.job.json             the job the folder belongs to: key and arguments
    OUT_DIR/concepts.partial.npz + .json  the state of an unfinished job (State)
    OUT_DIR/concepts.cache/SPLIT.f32      the layer's samples (float32 rows of C), while the job runs
    OUT_DIR/concepts.lock                 held by the one process building there (the atlas's JobLock)
    OUT_DIR/thumbnails/LAYER/CONCEPT_RANK.png, thumbnails/regions.json   the atlas's crops (atlas.thumbs)
    OUT_DIR/pages/concept_NNN.png         a concept's top images, the region where it is strongest outlined
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import numpy as np

from .. import writes
from ..atlas.store import not_a_file, npz_headers, read_json, write_json
from .dictionary import DICTIONARY_FILE, ConceptError

RECORD_FILE = "concepts.json"
JOB_FILE = "concepts.job.json"
PARTIAL = "concepts.partial"
CACHE_DIR = "concepts.cache"
LOCK_FILE = "concepts.lock"
PAGES_DIR = "pages"
SPLITS = ("train", "held")
RESTART = "run again with --restart to start over, or delete that folder"


def page_path(out_dir, concept: int) -> Path:
    return Path(out_dir) / PAGES_DIR / f"concept_{int(concept):03d}.png"


def read_record(out_dir) -> dict:
    path = Path(out_dir)
    path = path / RECORD_FILE if path.is_dir() else path
    if not path.is_file():
        raise ConceptError(f"No concepts at {path} (learn them with `network-inspector concepts`).")
    try:
        record = read_json(path)
    except Exception as exc:
        raise ConceptError(str(exc)) from None
    if not isinstance(record, dict) or not {"layer", "method", "k", "fit", "concepts"} <= record.keys():
        raise ConceptError(f"{path} is not a concepts record (it lacks layer, method, k, fit or concepts).")
    return record


def check_out_dir(out: Path, key: str, arguments: dict) -> dict | None:
    """The finished record when `out` holds this job's; None to go on (the job file then written). ConceptError,
    with nothing changed, when `out` is a file or belongs to another job."""
    if out.exists() and not out.is_dir():
        raise ConceptError(f"--out {out} is a file; the concepts need a folder.")
    for name in (JOB_FILE, RECORD_FILE, DICTIONARY_FILE, f"{PARTIAL}.npz", f"{PARTIAL}.json"):
        not_a_file(out / name)
    job_file, record = out / JOB_FILE, out / RECORD_FILE
    if job_file.is_file():
        theirs = read_json(job_file)
        if not isinstance(theirs, dict) or not isinstance(theirs.get("arguments"), dict):
            raise ConceptError(f"{job_file} is damaged (not the record of a job); {RESTART}.")
        if theirs.get("key") != key:
            a = theirs["arguments"]
            raise ConceptError(f"{out} holds the concepts of a different job (model {a.get('model')}, layer "
                               f"{a.get('layer')}, {a.get('method')} K={a.get('k')}, data {a.get('data')}); choose "
                               f"another --out or {RESTART}.")
        if record.is_file() and not (out / f"{PARTIAL}.json").is_file():
            return read_record(out)
    elif record.is_file() or (out / DICTIONARY_FILE).is_file():
        raise ConceptError(f"{out} already holds concepts this job did not make; choose another --out or delete them.")
    writes.make_folder(out)
    write_json(job_file, {"key": key, "arguments": arguments})
    return None


def forget_job(out: Path, everything: bool = False) -> None:
    """Remove the job file, saved state and cache (with `everything`, the results too)."""
    names = [JOB_FILE, f"{PARTIAL}.npz", f"{PARTIAL}.json"]
    if everything:
        names += [RECORD_FILE, DICTIONARY_FILE]
    for name in names:
        not_a_file(out / name)
    for name in names:
        (out / name).unlink(missing_ok=True)
    shutil.rmtree(out / CACHE_DIR, ignore_errors=True)


class SampleCache:
    """The layer's samples on disk, one float32 row of C channels each, appended image by image per split;
    opened again at the rows a saved state counts (what was written after it is cut off)."""

    def __init__(self, out: Path, channels: int, rows: dict[str, int] | None = None) -> None:
        self.folder, self.channels = out / CACHE_DIR, channels
        writes.make_folder(self.folder)
        self.rows = dict(rows or {s: 0 for s in SPLITS})
        self.files = {}
        for split in SPLITS:
            path = self.folder / f"{split}.f32"
            if not path.exists():
                path.touch()
            if path.stat().st_size < self.rows[split] * channels * 4:
                raise ConceptError(f"The saved samples in {path} are shorter than the saved state says; {RESTART}.")
            file = open(path, "r+b")
            file.truncate(self.rows[split] * channels * 4)
            file.seek(0, 2)
            self.files[split] = file

    def append(self, split: str, samples: np.ndarray) -> int:
        """Write (n, C) samples; the row they start at."""
        start = self.rows[split]
        self.files[split].write(np.ascontiguousarray(samples, np.float32).tobytes())
        self.rows[split] += samples.shape[0]
        return start

    def flush(self) -> None:
        for file in self.files.values():
            file.flush()

    def reader(self, split: str) -> np.ndarray:
        self.flush()
        if self.rows[split] == 0:
            return np.zeros((0, self.channels), np.float32)
        return np.memmap(self.folder / f"{split}.f32", np.float32, "r", shape=(self.rows[split], self.channels))

    def close(self) -> None:
        for file in self.files.values():
            file.close()


class State:
    """The saved state of an unfinished job: which images are done and where their samples are, and the fit so
    far (arrays under fit/). Written atomically (npz and json); checked before it is believed."""

    def __init__(self, out: Path, key: str, images: int) -> None:
        self.out, self.key, self.images = out, key, images
        self.arrays, self.meta = out / f"{PARTIAL}.npz", out / f"{PARTIAL}.json"
        self.done = np.zeros(images, bool)
        self.start = np.full(images, -1, np.int64)
        self.height = np.zeros(images, np.int64)
        self.width = np.zeros(images, np.int64)
        self.info: dict = {"phase": "pass", "rows": {s: 0 for s in SPLITS}, "skipped": []}
        self.fit: dict[str, np.ndarray] = {}

    def damaged(self, why: str) -> ConceptError:
        return ConceptError(f"The saved state of these concepts in {self.out} is damaged ({why}); {RESTART}.")

    def load(self) -> bool:
        """Read the saved state when it is this job's; whether there was one."""
        for path in (self.meta, self.arrays):
            not_a_file(path)
        if not self.meta.is_file() or not self.arrays.is_file():
            return False
        try:
            meta = json.loads(self.meta.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise self.damaged(f"{self.meta.name} cannot be read: {exc}") from None
        if not isinstance(meta, dict) or meta.get("key") != self.key:
            return False
        try:
            headers = npz_headers(self.arrays)
            for name in ("done", "start", "height", "width"):
                if headers.get(name, ((),))[0] != (self.images,):
                    raise self.damaged(f"{name} is not one value per image")
            with np.load(self.arrays, allow_pickle=False) as arrays:
                self.done = np.array(arrays["done"], bool)
                self.start, self.height, self.width = (np.array(arrays[n], np.int64)
                                                       for n in ("start", "height", "width"))
                self.fit = {k[4:]: np.array(arrays[k]) for k in arrays.files if k.startswith("fit/")}
        except ConceptError:
            raise
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            raise self.damaged(f"{self.arrays.name} cannot be read: {exc}") from None
        info = meta.get("info")
        if not isinstance(info, dict) or info.get("phase") not in ("pass", "fit") or not isinstance(
                info.get("rows"), dict) or not isinstance(info.get("skipped"), list):
            raise self.damaged(f"{self.meta.name} lacks the phase, rows or skipped files")
        self.info = info
        return True

    def save(self, *_ignored) -> None:
        """Write the state (its signature is the atlas's `Checkpoint.save`, so the atlas's loop saves it)."""
        arrays = {"done": self.done, "start": self.start, "height": self.height, "width": self.width,
                  **{f"fit/{k}": v for k, v in self.fit.items()}}
        writes.save_npz(self.arrays, arrays)
        write_json(self.meta, {"key": self.key, "info": self.info})

    def clear(self) -> None:
        for path in (self.meta, self.arrays):
            path.unlink(missing_ok=True)
        shutil.rmtree(self.out / CACHE_DIR, ignore_errors=True)
