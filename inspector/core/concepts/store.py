"""A concepts folder, the one place that knows its layout, and the state of an unfinished job.

    OUT_DIR/dictionary.safetensors        the dictionary (dictionary.load_dictionary)
    OUT_DIR/concepts.json                 the record: job, data listing, fit metrics, per-concept stats and tops
    OUT_DIR/concepts.job.json             the job the folder belongs to: key and arguments
    OUT_DIR/concepts.partial.npz + .json  the state of an unfinished job (State)
    OUT_DIR/concepts.cache/SPLIT.f32      the layer's samples (float32 rows of C), while the job runs
    OUT_DIR/concepts.lock                 held by the one process building there (folder_jobs.JobLock)
    OUT_DIR/thumbnails/LAYER/CONCEPT_RANK.png, thumbnails/regions.json   the crops (folder_jobs.thumbnails)
    OUT_DIR/pages/concept_NNN.png         a concept's top images, the region where it is strongest outlined
"""

from __future__ import annotations

import os
import shutil
import zipfile
import zlib
from pathlib import Path

import numpy as np

from .. import folder_jobs
from ..common.arguments import checked
from ..common.errors import ArgumentValueError
from ..folder_jobs import KINDS, FolderKind, check_fields, expect, not_a_file, npz_headers, only, read_json, save_state
from ..folder_jobs import read_record as read_state_record
from ..storage import writes
from ..storage.paths import check_name, regular_file
from .dictionary import ConceptError

JOB_FILE, RECORD_FILE, _ = KINDS["concepts"]  # "concepts.job.json", "concepts.json", the dictionary
PARTIAL = "concepts.partial"
CACHE_DIR = "concepts.cache"
LOCK_FILE = "concepts.lock"
PAGES_DIR = "pages"
SPLITS = ("train", "held")
RESTART = "run again with --restart to start over, or delete that folder"


@checked
def page_path(out_dir: str | os.PathLike, concept: int) -> Path:
    """Where concept `concept`'s page (its top images, the region outlined) is in the concepts folder `out_dir`."""
    check_name(out_dir, "The concepts folder", ConceptError)
    if isinstance(concept, bool) or concept < 0:
        raise ArgumentValueError(f"page_path(): concept must be a concept's id (a whole number from 0), not "
                                 f"{concept!r}.")
    return Path(out_dir) / PAGES_DIR / f"concept_{int(concept):03d}.png"


@checked
def read_record(out_dir: str | os.PathLike) -> dict:
    """The concepts.json in `out_dir` (or that file itself), checked to be a concepts record; ConceptError else."""
    path = Path(check_name(out_dir, "The concepts folder", ConceptError))
    path = path / RECORD_FILE if path.is_dir() else path
    if not path.exists() and not path.is_symlink():
        raise ConceptError(f"No concepts at {path} (learn them with `network-inspector concepts`).")
    regular_file(str(path), "The concepts record", ConceptError)
    try:
        record = read_json(path)
    except Exception as exc:  # noqa: BLE001 - the atlas's reader says why in one line
        raise ConceptError(str(exc)) from None
    if not isinstance(record, dict) or not {"layer", "method", "k", "fit", "concepts"} <= record.keys():
        raise ConceptError(f"{path} is not a concepts record (it lacks layer, method, k, fit or concepts).")
    why = _record_wrong(record)
    if why:
        raise ConceptError(f"{path} is damaged: {why}.")
    return record


def _number(value, none: bool = False) -> bool:
    return (value is None and none) or (isinstance(value, (int, float)) and not isinstance(value, bool))


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _text(value) -> bool:
    return isinstance(value, str) and "\0" not in value


def _record_wrong(r: dict) -> str | None:
    """What in a concepts record is not what a job writes, of what the command's table and the app read; None."""
    from .dictionary import LAYOUTS, METHODS

    if not _text(r["layer"]) or not r["layer"] or r["method"] not in METHODS or not _whole(r["k"]) or r["k"] < 1:
        return "its layer, method or K is not one a job writes"
    if r.get("layout", "NCHW") not in LAYOUTS or not all(_whole(r.get(n, 0)) for n in ("channels", "images")):
        return "its layout, channels or image count is not one a job writes"
    fit, data, k = r["fit"], r.get("data", {}), r["k"]
    if not isinstance(fit, dict) or not _whole(fit.get("samples", 0)) or not _whole(fit.get("pca_k", 0)) \
            or not _text(fit.get("measured_on", "")) or not _number(fit.get("sparsity", 0)) \
            or not all(_number(fit.get(n), none=True) for n in ("variance_explained", "pca_variance_explained",
                                                                 "relative_error")) \
            or not isinstance(fit.get("never_active", []), list) \
            or not all(_whole(i) and i < k for i in fit.get("never_active", [])):
        return "its fit's figures are not numbers of a fit"
    if not isinstance(data, dict) or not isinstance(data.get("skipped", []), list) \
            or not isinstance(data.get("held_out", []), list) or not _text(data.get("root", "")) \
            or not all(isinstance(e, dict) and _text(e.get("path")) and _text(e.get("reason"))
                       for e in data.get("skipped", [])) or not all(_text(e) for e in data.get("held_out", [])):
        return "its data (root, skipped files, held-out images) is not a listing a job writes"
    concepts = r["concepts"]
    if not isinstance(concepts, list) or len(concepts) != k:
        return f"it lists {len(concepts) if isinstance(concepts, list) else 'no list of'} concepts for K={k}"
    for i, c in enumerate(concepts):
        if not isinstance(c, dict) or c.get("id") != i or not isinstance(c.get("top", []), list) or not all(
                isinstance(e, dict) and _text(e.get("image")) and _number(e.get("score")) and _whole(e.get("y"))
                and _whole(e.get("x")) for e in c.get("top", [])) or not all(
                _number(c.get(n, 0), none=n == "max") for n in ("active_fraction", "mean", "std", "frac_positive",
                                                               "max")):
            return f"concept {i} is not a concept's id, figures and top images"
    return None


def _other_job(out: Path, a: dict, finished: bool) -> str:
    return (f"{out} holds the concepts of a different job (model {a.get('model')}, layer {a.get('layer')}, "
            f"{a.get('method')} K={a.get('k')}, data {a.get('data')}); choose another --out or {RESTART}.")


FOLDER = FolderKind("concepts", ConceptError, RESTART, "the concepts need a folder",
                    "already holds concepts this job did not make; choose another --out or delete them.",
                    _other_job, lambda out: read_record(out), scratch=CACHE_DIR)


def check_out_dir(out: Path, key: str, arguments: dict) -> dict | None:
    """The finished record when `out` holds this job's; None to go on (the job file then written). ConceptError,
    with nothing changed, when `out` is a file or belongs to another job."""
    return folder_jobs.check_out_dir(out, FOLDER, key, arguments)


def check_folder(out: Path) -> None:
    """ConceptError, with nothing changed, when `out` is a file or holds another kind of job (an atlas)."""
    folder_jobs.check_folder(out, FOLDER)


def forget_job(out: Path, everything: bool = False) -> None:
    """Remove the job file, saved state and cache (with `everything`, the results too)."""
    folder_jobs.forget_job(out, FOLDER, results=everything)


class SampleCache:
    """The layer's samples on disk, one float32 row of C channels each, appended image by image per split;
    opened again at the rows a saved state counts (what was written after it is cut off). `crc`: each split's
    CRC-32 so far, which a saved state keeps (`record`) and its check reads the files against."""

    def __init__(self, out: Path, channels: int, rows: dict[str, int] | None = None,
                 crc: dict[str, int] | None = None) -> None:
        self.folder, self.channels = out / CACHE_DIR, channels
        writes.make_folder(self.folder)
        self.rows = dict(rows or {s: 0 for s in SPLITS})
        self.crc = dict(crc or {s: 0 for s in SPLITS})
        self.files = {}
        for split in SPLITS:
            path = self.folder / f"{split}.f32"
            if not path.exists():
                path.touch()
            if path.stat().st_size < self.rows[split] * channels * 4:
                raise ConceptError(f"The saved samples in {path} are shorter than the saved state says; {RESTART}.")
            file = open(path, "r+b")
            if path.stat().st_size != self.rows[split] * channels * 4:  # samples written after the state was saved
                file.truncate(self.rows[split] * channels * 4)
            file.seek(0, 2)
            self.files[split] = file

    def append(self, split: str, samples: np.ndarray) -> int:
        """Write (n, C) samples; the row they start at."""
        start = self.rows[split]
        data = np.ascontiguousarray(samples, np.float32).tobytes()
        self.files[split].write(data)
        self.crc[split] = zlib.crc32(data, self.crc[split])
        self.rows[split] += samples.shape[0]
        return start

    def record(self) -> dict:
        """What a saved state keeps of the cache: each split's rows and CRC-32."""
        self.flush()
        return {"rows": dict(self.rows), "crc": dict(self.crc)}

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
    far (arrays under fit/). Written whole (npz, then its record with their checksum); read by `load`, which
    checks the record's fields and the arrays' kinds and shapes, and believed once `resume.check_state` has
    checked its values against the job, the listing and the sample cache."""

    PER_IMAGE = {"done": bool, "start": np.int64, "height": np.int64, "width": np.int64}

    def __init__(self, out: Path, key: str, images: int) -> None:
        self.out, self.key, self.images = out, key, images
        self.arrays, self.meta = out / f"{PARTIAL}.npz", out / f"{PARTIAL}.json"
        self.done = np.zeros(images, bool)
        self.start = np.full(images, -1, np.int64)
        self.height = np.zeros(images, np.int64)
        self.width = np.zeros(images, np.int64)
        self.info: dict = {"phase": "pass", "rows": {s: 0 for s in SPLITS}, "crc": {s: 0 for s in SPLITS},
                           "skipped": []}
        self.fit: dict[str, np.ndarray] = {}
        self.resumed = False  # whether `load` found a saved state
        self.headers: dict = {}  # the saved arrays' (shape, dtype), as `load` read them
        self.record: dict = {}  # the saved record, as `load` read it

    def damaged(self, why: str) -> ConceptError:
        return ConceptError(f"The saved state of these concepts in {self.out} is damaged ({why}); {RESTART}.")

    def load(self) -> bool:
        """Read the saved state; whether there was one. ConceptError when it is another job's, or its record or
        arrays are not what a job writes (their values are `resume.check_state`'s)."""
        for path in (self.meta, self.arrays):
            not_a_file(path)
        if not self.meta.is_file() or not self.arrays.is_file():
            return False
        meta = read_state_record(self.meta, self.damaged)
        check_fields(meta, self.meta.name, {"key", "info", "digest"}, set(), self.damaged)
        if meta["key"] != self.key:
            raise self.damaged(f"{self.meta.name} is the state of another job ({_short(repr(meta['key']))}, not "
                               f"{self.key})")
        if not isinstance(meta["info"], dict):
            raise self.damaged(f"{self.meta.name}: info is not the record of a job's state")
        try:
            headers = npz_headers(self.arrays)
            only(headers, self.arrays.name, lambda n: n in self.PER_IMAGE or n.startswith("fit/"), self.damaged)
            for name, dtype in self.PER_IMAGE.items():
                expect(headers, self.arrays.name, name, dtype, (self.images,), self.damaged, per_image=True)
            with np.load(self.arrays, allow_pickle=False) as arrays:
                self.done, self.start, self.height, self.width = (np.array(arrays[n]) for n in self.PER_IMAGE)
                self.fit = {k[4:]: np.array(arrays[k]) for k in arrays.files if k.startswith("fit/")}
        except ConceptError:
            raise
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            raise self.damaged(f"{self.arrays.name} cannot be read: {exc}") from None
        self.headers = headers
        self.info, self.record, self.resumed = meta["info"], meta, True
        return True

    def save(self, *_ignored) -> None:
        """Write the state (its signature is the atlas's `Checkpoint.save`, so the atlas's loop saves it)."""
        arrays = {"done": self.done, "start": self.start, "height": self.height, "width": self.width,
                  **{f"fit/{k}": v for k, v in self.fit.items()}}
        save_state(self.arrays, self.meta, arrays, {"key": self.key, "info": self.info})

    def clear(self) -> None:
        for path in (self.meta, self.arrays):
            path.unlink(missing_ok=True)
        shutil.rmtree(self.out / CACHE_DIR, ignore_errors=True)


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."
