"""What the atlas and the concepts keep alike in a job folder, checked by one set of rules: which kind of job a
folder is for, and the common parts of a saved state (its record's JSON, the files skipped, the arrays' kinds and
shapes, and the checksum that ties the record to its arrays).

A saved state is the record OUT_DIR/KIND.partial.json beside its arrays KIND.partial.npz. The record holds a
`digest`: the SHA-256 of the arrays file's bytes and of the record's other fields, so that a value no rule can
check without running the model again (a score, a position, a fit's weights) is not believed once changed. The
rules (kinds, shapes, ranges, counts against the listing) are checked first, so that what is wrong is named.
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Callable

import numpy as np

from ..storage import writes

#: The files that say which kind of job a folder holds: its job file, then its results
KINDS = {"atlas": ("atlas.job.json", "atlas.json"),
         "concepts": ("concepts.job.json", "concepts.json", "dictionary.safetensors"),
         "evaluation": ("evaluation.job.json", "summary.json", "summary.csv", "values.json", "values.csv")}
_SAID = {"atlas": "an atlas", "concepts": "concepts", "evaluation": "an evaluation"}

#: the longest reason a skipped file is recorded with (a decoder's message)
REASON_MOST = 2000

Damaged = Callable[[str], Exception]  # the error of a damaged state, with what is wrong


def check_kind(out: Path, kind: str, error: type[Exception]) -> None:
    """`error`, in one line, when `out` holds another kind of job's files: a folder holds one kind of job (the
    atlas's and the concepts' thumbnails and regions would overwrite each other's)."""
    for other, names in KINDS.items():
        found = next((name for name in names if other != kind and (out / name).exists()), None)
        if found:
            raise error(f"{out} holds {_SAID[other]} ({found}), not {_SAID[kind]}: a folder holds one kind of job; "
                        f"choose another --out for the {kind}.")


def read_job_file(path: Path, error: type[Exception], restart: str) -> dict:
    """A folder's job file: {"key", "arguments"}; `error`, in one line ending with `restart`, when it is not."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        why = _short(str(exc), 120) if not isinstance(exc, RecursionError) else "nested too deeply"
        raise error(f"{path} is damaged (it cannot be read: {why}); {restart}.") from None
    if not isinstance(record, dict) or set(record) != {"key", "arguments"} or not isinstance(record["key"], str) \
            or not isinstance(record["arguments"], dict):
        raise error(f"{path} is damaged (not the record of a job); {restart}.")
    return record


def check_job_arguments(path: Path, record: dict, arguments: dict, error: type[Exception], restart: str) -> None:
    """`error` unless the job file of this job's key holds this job's arguments (its key is a hash of them)."""
    if record["arguments"] != json.loads(json.dumps(arguments)):
        raise error(f"{path} is damaged (its arguments are not those its key was made of); {restart}.")


def read_record(path: Path, damaged: Damaged) -> dict:
    """A state's JSON record, a dict; `damaged(why)` when it cannot be read as one."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise damaged(f"{path.name} cannot be read: {_short(str(exc), 120)}") from None
    except RecursionError:
        raise damaged(f"{path.name} is nested too deeply to be a job's state") from None
    if not isinstance(record, dict):
        raise damaged(f"{path.name} is not the record of a job's state")
    return record


def check_fields(record: dict, name: str, needed: set[str], optional: set[str], damaged: Damaged) -> None:
    """Every field a state's record must hold is there, and none it cannot hold."""
    missing, unknown = sorted(needed - record.keys()), sorted(record.keys() - needed - optional)
    if missing:
        raise damaged(f"{name} lacks {', '.join(missing)}")
    if unknown:
        raise damaged(f"{name} holds {_short(', '.join(map(str, unknown)), 80)}, which no saved state has")


def check_done(record: dict, done: np.ndarray, names: dict[str, int], images: int, meta: str,
               damaged: Damaged) -> np.ndarray:
    """The saved record's skipped files and its count of images done (a whole number up to `images`) checked
    against the arrays' `done`: which images were skipped (skipped_images). `check_count` then."""
    skipped = skipped_images(record["skipped"], names, done, meta, damaged)
    whole(record["done"], f"{meta}: done", 0, images, damaged)
    return skipped


def check_count(record: dict, done: np.ndarray, meta: str, arrays: str, damaged: Damaged) -> None:
    """The record counts the images its arrays mark done."""
    if record["done"] != int(done.sum()):
        raise damaged(f"{meta} counts {record['done']} images done, {arrays} {int(done.sum())}")


def whole(value, name: str, low: int, high: int, damaged: Damaged) -> int:
    """`value` when it is a whole number (not a bool) from `low` to `high`."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise damaged(f"{name} must be a whole number from {low} to {high}, not {_short(repr(value), 40)}")
    return value


def skipped_images(skipped, names: dict[str, int], done: np.ndarray, record: str, damaged: Damaged) -> np.ndarray:
    """(images,) bool: the images the record lists as skipped. Each entry is a path of the listing (once) and the
    reason it could not be read, of an image done."""
    where = f"{record}: 'skipped'"
    if not isinstance(skipped, list):
        raise damaged(f"{where} is not a list of files and reasons")
    out = np.zeros(done.size, bool)
    for entry in skipped:
        if not isinstance(entry, dict) or set(entry) != {"path", "reason"} or not isinstance(entry["path"], str) \
                or not isinstance(entry["reason"], str):
            raise damaged(f"{where} is not a list of files and reasons")
        index = names.get(entry["path"])
        if index is None:
            raise damaged(f"{where} names {_short(repr(entry['path']), 60)}, which is not in the data")
        if out[index] or not done[index]:
            raise damaged(f"{where} names {entry['path']} {'twice' if out[index] else 'before it was done'}")
        if not entry["reason"] or "\0" in entry["reason"] or len(entry["reason"]) > REASON_MOST:
            raise damaged(f"{where}: the reason for {entry['path']} is not a decoder's message")
        out[index] = True
    return out


def expect(headers: dict[str, tuple[tuple, np.dtype]], file: str, name: str, dtype, shape: tuple,
           damaged: Damaged, per_image: bool = False) -> None:
    """The array `name` is in the .npz (its `headers`), of `dtype` and `shape` (`per_image`: one value per image
    of the listing), before any of it is read."""
    if name not in headers:
        raise damaged(f"{file} lacks {name}")
    got_shape, got_dtype = headers[name]
    if got_dtype != np.dtype(dtype):
        raise damaged(f"{file}: {name} is {got_dtype}, not {np.dtype(dtype)}")
    if got_shape != shape:
        if per_image and len(got_shape) == 1:
            raise damaged(f"{file}: {name} declares {got_shape[0]} values, the data has {shape[0]} images")
        raise damaged(f"{file}: {name} has shape {got_shape}, not {shape}")


def only(headers: dict, file: str, allowed: Callable[[str], bool], damaged: Damaged) -> None:
    """No array in the .npz that a saved state does not write."""
    unknown = sorted(name for name in headers if not allowed(name))
    if unknown:
        raise damaged(f"{file} holds {_short(', '.join(unknown), 80)}, which no saved state has")


def digest(arrays: bytes, record: dict) -> str:
    """The SHA-256 of a state: its arrays file's bytes and its record's fields (but the digest)."""
    fields = {k: v for k, v in record.items() if k != "digest"}
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(arrays + b"\0" + text.encode("utf-8")).hexdigest()


def save_state(arrays_path: Path, record_path: Path, arrays: dict[str, np.ndarray], record: dict) -> None:
    """Write a state: its arrays (an uncompressed .npz), then its record with their digest, each whole or not at
    all. A crash between the two leaves a record that does not match its arrays: refused as damaged, never
    believed half-old."""
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    data = buffer.getvalue()
    writes.write_bytes(arrays_path, data)
    writes.write_json(record_path, {**record, "digest": digest(data, record)}, separators=(",", ":"))


def check_digest(arrays: Path, record: dict, damaged: Damaged) -> None:
    """`damaged` unless the record's digest is that of the arrays file and the record as they are now."""
    try:
        data = arrays.read_bytes()
    except OSError as exc:
        raise damaged(f"{arrays.name} cannot be read: {exc.strerror or exc}") from None
    if record.get("digest") != digest(data, record):
        raise damaged(f"its checksum does not match: {arrays.name} or {arrays.with_suffix('.json').name} changed "
                      f"after the job saved them")


def _short(text: str, most: int) -> str:
    return text if len(text) <= most else text[:most - 3] + "..."
