"""An evaluation folder, the one place that knows its layout: what each file is called, the results written and
read back, the saved state of an unfinished job.

    OUT_DIR/summary.json            the summary per method, metric and number, with the job's settings (finished)
    OUT_DIR/summary.csv             the same summary as a table
    OUT_DIR/values.json, .csv       every image's values
    OUT_DIR/evaluation.job.json     the job the folder belongs to: key and arguments
    OUT_DIR/evaluation.partial.npz + .json the state of an unfinished job (Checkpoint)
    OUT_DIR/evaluation.lock         held by the one process evaluating there (JobLock)
"""

from __future__ import annotations

import csv
import io
import math
import zipfile
from pathlib import Path

import numpy as np

from ..common.errors import InspectorError
from ..folder_jobs import (KINDS, FolderKind, check_count, check_digest, check_done, expect, npz_headers, only,
                           read_json, save_state, saved_record)
from ..storage import writes

JOB_FILE, SUMMARY_JSON, SUMMARY_CSV, VALUES_JSON, VALUES_CSV = KINDS["evaluation"]
PARTIAL = "evaluation.partial"
LOCK_FILE = "evaluation.lock"
RESTART = "run again with --restart (restart=True) to start over, or delete that folder"
WHAT = "Evaluation"  # the job's name when it is cancelled


class EvaluationError(InspectorError):
    """An evaluation could not be run or read (its folder belongs to another job, its state is damaged)."""


def read_summary(out_dir) -> dict:
    """The finished evaluation's summary.json in `out_dir`."""
    path = Path(out_dir) / SUMMARY_JSON
    summary = read_json(path)
    if not isinstance(summary, dict) or not isinstance(summary.get("summary"), list):
        raise EvaluationError(f"{path} is not an evaluation's summary (it lacks its rows); {RESTART}.")
    return summary


def open_summary(out_dir) -> dict:
    """The summary of the finished evaluation in `out_dir`, for Open evaluation… (in the app, or on the engine's
    machine for a window on a remote engine): an EvaluationError in one line where the folder holds none (an
    unfinished job's folder says how to finish it) or its summary cannot be read."""
    out = Path(out_dir)
    if not (out / SUMMARY_JSON).is_file():
        unfinished = (out / JOB_FILE).is_file()
        raise EvaluationError(f"{out} holds no finished evaluation (no {SUMMARY_JSON})" + (
            ": it is unfinished; evaluate again with the same choices to finish it." if unfinished else "."))
    try:
        return read_summary(out)
    except InspectorError as exc:
        raise EvaluationError(f"Not opened: {exc}") from None


def _other_job(out: Path, a: dict, finished: bool) -> str:
    what = "the evaluation" if finished else "an unfinished evaluation"
    names = (", ".join(map(str, a.get(k) or ())) for k in ("methods", "metrics"))
    return (f"{out} holds {what} of a different job (model {a.get('model')}, data {a.get('data')}, methods "
            f"{next(names)}, metrics {next(names)}); choose another --out, or {RESTART}.")


FOLDER = FolderKind("evaluation", EvaluationError, RESTART, "the evaluation needs a folder",
                    f"already holds a {SUMMARY_JSON} that this job did not make; choose another --out or delete it.",
                    _other_job, read_summary)


def _plain(value: float):
    """A float as JSON writes it: None where it is not a number (NaN, inf)."""
    return value if math.isfinite(value) else None


def write_results(job, out: Path, values: np.ndarray, read: np.ndarray, skipped: list[dict], head: dict,
                  rows: list[dict]) -> dict:
    """The per-image values (JSON and CSV), then the summary (CSV, and JSON last: what says the job finished);
    `values` (images, columns), `read` which images gave them; `head` what the files say of the job. The summary
    back."""
    images = [i for i in range(len(job.names)) if read[i]]
    per_image = []
    table = io.StringIO()
    writer = csv.writer(table, lineterminator="\n")
    writer.writerow(["image", "method", "metric", "number", "value"])
    for i in images:
        nested: dict = {}
        for j, (method, metric, number) in enumerate(job.columns):
            nested.setdefault(method, {}).setdefault(metric, {})[number] = _plain(float(values[i, j]))
            writer.writerow([job.names[i], method, metric, number, repr(float(values[i, j]))])
        per_image.append({"image": job.names[i], "values": nested})
    writes.write_json(out / VALUES_JSON, {**head, "images": per_image, "skipped": skipped}, indent=1)
    writes.write_text(out / VALUES_CSV, table.getvalue())
    summary = io.StringIO()
    writer = csv.writer(summary, lineterminator="\n")
    fields = ["method", "metric", "number", "n", "mean", "std", "ci_low", "ci_high"]
    writer.writerow(fields)
    for row in rows:
        writer.writerow([repr(row[f]) if isinstance(row[f], float) else row[f] for f in fields])
    writes.write_text(out / SUMMARY_CSV, summary.getvalue())
    result = {**head, "images": len(images), "skipped": skipped,
              "summary": [{k: _plain(v) if isinstance(v, float) else v for k, v in row.items()} for row in rows]}
    writes.write_json(out / SUMMARY_JSON, result, indent=1)
    return result


class Checkpoint:
    """The saved state of an unfinished evaluation: which images are done, every image's values (NaN where not
    done or skipped), the skipped files. Checked before it is believed: the record's fields, each array's kind and
    shape before its data is read, the values against which images are done, and the checksum."""

    def __init__(self, out: Path, key: str, images: int, columns: int, names: tuple[str, ...]) -> None:
        self.out, self.key, self.images, self.columns = out, key, images, columns
        self.names = {name: i for i, name in enumerate(names)}
        self.arrays, self.meta = out / f"{PARTIAL}.npz", out / f"{PARTIAL}.json"

    def damaged(self, why: str) -> EvaluationError:
        return EvaluationError(f"The saved state of this evaluation in {self.out} is damaged ({why}); {RESTART}.")

    def load(self) -> tuple[np.ndarray, np.ndarray, list[dict]]:
        """(which images are done, the values, the skipped files): nothing done when there is no state."""
        nothing = np.zeros(self.images, bool), np.full((self.images, self.columns), np.nan), []
        meta = saved_record(self.meta, self.arrays, self.key, self.damaged)
        if meta is None:
            return nothing
        file = self.arrays.name
        try:
            headers = npz_headers(self.arrays)
            only(headers, file, lambda name: name in ("done", "values"), self.damaged)
            expect(headers, file, "done", bool, (self.images,), self.damaged, per_image=True)
            expect(headers, file, "values", np.float64, (self.images, self.columns), self.damaged)
            with np.load(self.arrays, allow_pickle=False) as arrays:
                done, values = np.array(arrays["done"]), np.array(arrays["values"])
        except EvaluationError:
            raise
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            raise self.damaged(f"{file} cannot be read: {exc}") from None
        skipped = check_done(meta, done, self.names, self.images, self.meta.name, self.damaged)
        check_count(meta, done, self.meta.name, file, self.damaged)
        if not np.isnan(values[~done | skipped]).all():
            raise self.damaged("it holds values of an image not done yet, or skipped")
        check_digest(self.arrays, meta, self.damaged)
        return done, values, meta["skipped"]

    def save(self, done: np.ndarray, values: np.ndarray, skipped: list[dict]) -> None:
        save_state(self.arrays, self.meta, {"done": np.asarray(done, bool), "values": np.asarray(values, np.float64)},
                   {"key": self.key, "done": int(np.count_nonzero(done)), "skipped": skipped})

    def saved(self) -> bool:
        return self.meta.is_file() and self.arrays.is_file()

    def clear(self) -> None:
        for path in (self.meta, self.arrays):
            path.unlink(missing_ok=True)


def checkpoint_of(job, out: Path) -> Checkpoint:
    """Where `job` keeps its state in `out` between runs."""
    return Checkpoint(out, job.key, len(job.names), len(job.columns), job.names)
