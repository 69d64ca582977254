"""A job folder's life by one set of rules, whatever the kind of job: which job the folder belongs to (its job
file, written first), whether it holds that job finished, what a restart or a failed start removes. A kind says
its files (`state.KINDS`: the job file, then its results), its error, its words, and how it reads its result."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..storage import writes
from .files import LOCK_FILE, JobLock, not_a_file, write_json
from .state import KINDS, Damaged, check_fields, check_job_arguments, check_kind, read_job_file, read_record


@dataclass(frozen=True)
class FolderKind:
    """What one kind of job keeps in its folder and how it says so."""

    kind: str  # a key of KINDS: "atlas", "concepts"
    error: type[Exception]
    restart: str  # how to start over, the end of a refusal
    needs: str  # "the atlas needs a folder"
    foreign: str  # "already holds an atlas.json that this job did not make; ... delete it."
    other_job: Callable[[Path, dict, bool], str]  # (out, their arguments, finished) -> the refusal's sentence
    read_finished: Callable[[Path], dict]  # the finished result in the folder
    scratch: str | None = None  # a folder the job works in (removed with the job's state)

    @property
    def job_file(self) -> str:
        return KINDS[self.kind][0]

    @property
    def results(self) -> tuple[str, ...]:
        return KINDS[self.kind][1:]

    @property
    def partial(self) -> str:
        return f"{self.kind}.partial"


def check_folder(out: Path, kind: FolderKind) -> None:
    """`kind.error`, with nothing changed, when `out` is a file or holds another kind of job."""
    if out.exists() and not out.is_dir():
        raise kind.error(f"--out {out} is a file; {kind.needs}.")
    check_kind(out, kind.kind, kind.error)


def check_out_dir(out: Path, kind: FolderKind, key: str, arguments: dict) -> dict | None:
    """The finished result when `out` holds the job `key` finished; None to go on (the job file is then written).
    `kind.error`, with nothing changed, when `out` is a file or belongs to another job."""
    check_folder(out, kind)
    job_file, partial = out / kind.job_file, out / f"{kind.partial}.json"
    for name in (kind.job_file, *kind.results, f"{kind.partial}.npz", f"{kind.partial}.json"):
        not_a_file(out / name)
    if job_file.is_file():
        theirs = read_job_file(job_file, kind.error, kind.restart)
        if theirs["key"] != key:
            raise kind.error(kind.other_job(out, theirs["arguments"], (out / kind.results[0]).is_file()))
        check_job_arguments(job_file, theirs, arguments, kind.error, kind.restart)
        if (out / kind.results[0]).is_file() and not partial.is_file():
            return kind.read_finished(out)
        return None  # its job file is there as it was written
    elif any((out / name).is_file() for name in kind.results):
        raise kind.error(f"{out} {kind.foreign}")
    writes.make_folder(out)
    write_json(job_file, {"key": key, "arguments": arguments})
    return None


def forget_job(out: Path, kind: FolderKind, results: bool = False) -> None:
    """Remove what a job keeps in `out` (its job file and saved state; with `results`, its results too): for a
    failed start, or a restart."""
    names = (kind.job_file, f"{kind.partial}.npz", f"{kind.partial}.json", *(kind.results if results else ()))
    for name in names:
        not_a_file(out / name)
    for name in names:
        (out / name).unlink(missing_ok=True)
    if kind.scratch:
        shutil.rmtree(out / kind.scratch, ignore_errors=True)


def open_job(out: Path, kind: FolderKind, key: str, arguments: dict, restart: bool) -> tuple[dict | None, bool]:
    """The job `key` opened in `out`, its lock held: (its finished result, or None to go on; whether this run
    starts it, so that a start that fails before any state is saved removes what it wrote). `restart` removes the
    folder's job, state and results first, once the folder is known to be of this kind."""
    check_folder(out, kind)  # before a restart removes anything
    if restart:
        forget_job(out, kind, results=True)
    started = not (out / kind.job_file).is_file()
    return check_out_dir(out, kind, key, arguments), started


def run_job(out: Path, kind: FolderKind, key: str, arguments: dict, restart: bool, work: Callable[[], object],
            finish: Callable[[object], dict], saved: Callable[[], bool], images: int, progress=None,
            lock: str | None = None) -> dict:
    """The job `key` run in `out` under its lock (`lock`: its own lock file's name), one way for every kind: its
    finished result when it has one (`progress` told all `images` are done), else `finish(work())` (the pass,
    resumed from the saved state there is, then its results); a start whose pass fails before any state was saved
    (`saved()` false) leaves nothing behind."""
    with JobLock(out, lock or LOCK_FILE):
        finished, started = open_job(out, kind, key, arguments, restart)
        if finished is not None:
            if progress:
                progress(images, images)
            return finished
        try:
            done = work()
        except BaseException:
            if started and not saved():
                forget_job(out, kind)  # a start that failed before any state was saved leaves nothing behind
            raise
        return finish(done)


def saved_record(meta: Path, arrays: Path, key: str, damaged: Damaged) -> dict | None:
    """The record of job `key`'s saved state (`meta`, beside its `arrays`), its fields there and its key this
    job's; None when there is no saved state (either file missing). What is there and not a file is refused."""
    for path in (meta, arrays):
        not_a_file(path)
    if not meta.is_file() or not arrays.is_file():
        return None
    record = read_record(meta, damaged)
    check_fields(record, meta.name, {"key", "done", "skipped", "digest"}, set(), damaged)
    if record["key"] != key:
        raise damaged(f"{meta.name} is the state of another job ({_short(repr(record['key']))}, not {key})")
    return record


def _short(text: str, most: int = 40) -> str:
    return text if len(text) <= most else text[:most - 3] + "..."
