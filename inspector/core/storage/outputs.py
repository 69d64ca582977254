"""Output files: checked before any model runs, so a run is never lost to a path that cannot be written.

Every command that writes a file calls `output_path` first and writes to the path it returns
(the file actually written, e.g. `foo` -> `foo.npz`).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Iterable

from ..common.errors import SpecError
from .paths import check_name, in_the_way, shown, too_long


def output_path(path: str | os.PathLike, suffix: str | None = None, flag: str = "--out",
                suffixes: tuple[str, ...] = ()) -> Path:
    """The file that will be written for `path`, checked now; a SpecError (one line) otherwise.

    `suffix`: appended when the name lacks it, as numpy does (`foo` -> `foo.npz`). `suffixes`: the
    endings the writer understands, lower case, most common first (the message names the first 8;
    empty: any). An existing folder is refused
    (name a file inside it); missing parent folders are fine (they are made when writing) as long as
    the nearest existing one is a folder this process can write into."""
    text = os.fspath(path)
    if not str(text).strip():
        raise SpecError(f"{flag} is empty; name the file to write.")
    out = Path(check_name(os.path.expanduser(text), flag, SpecError))
    _regular(out, flag)  # as typed: --out /dev/null is /dev/null, not /dev/null.npz
    if suffix and out.suffix != suffix:
        check_name(f"{out}{suffix}", flag, SpecError)
    if out.is_dir():
        raise SpecError(f"{flag} {out} is a folder; name a file inside it, e.g. {out / ('out' + (suffix or ''))}.")
    if suffix and out.suffix != suffix:  # numpy's rule, case and all (foo.NPZ -> foo.NPZ.npz)
        out = out.with_name(out.name + suffix)
    if suffixes and out.suffix.lower() not in suffixes:
        raise SpecError(f"{flag} {text}: cannot write {out.suffix or 'a file without an ending'}; "
                        f"use {', '.join(suffixes[:8])}{', ...' if len(suffixes) > 8 else ''}.")
    if out.is_dir():
        raise SpecError(f"{flag} {text}: {out} is a folder.")
    _regular(out, flag)
    _writable_folder(out.parent, flag, text)
    if out.exists() and not os.access(out, os.W_OK):
        raise SpecError(f"{flag} {out} exists and cannot be overwritten (permission denied).")
    return out


def _regular(out: Path, flag: str) -> None:
    """SpecError when `out` is there and is not a regular file, a link to one or a folder (the writer's rule)."""
    kind = in_the_way(out)
    if kind is not None:
        raise SpecError(f"{flag} {shown(out)} is not a regular file ({kind}); name a file to write.")


def output_folder(path: str | os.PathLike, flag: str = "--out") -> Path:
    """The folder a command writes into, checked now: not a file, on a disk this process can write
    to (it is made, with the folders above it, when writing); a SpecError (one line) otherwise."""
    text = os.fspath(path)
    if not str(text).strip():
        raise SpecError(f"{flag} is empty; name the folder to write.")
    out = Path(check_name(os.path.expanduser(text), flag, SpecError))
    if out.exists() and not out.is_dir():
        raise SpecError(f"{flag} {out} is a file; it must be a folder.")
    _writable_folder(out, flag, text)
    return out


def _writable_folder(folder: Path, flag: str, text: str) -> None:
    """The nearest existing folder at or above `folder` is a folder this process can write in."""
    while not folder.exists():  # the nearest folder that exists; the rest is made when writing
        if folder.parent == folder:
            break
        folder = folder.parent
    if folder.exists() and not folder.is_dir():
        raise SpecError(f"{flag} {text}: {folder} is a file, not a folder.")
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise SpecError(f"{flag} {text}: cannot write in {folder} ({exc.strerror or exc}).") from None


def make_parent(path: Path) -> Path:
    """Make the folders above `path` (checked by `output_path` before the run)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SpecError(f"Cannot make the folder {path.parent} ({exc.strerror or exc}).") from None
    return path


def not_read(out: Path, reads: Iterable[tuple[str, str | os.PathLike | None]], flag: str = "--out",
             typed: str | None = None) -> Path:
    """`out`, unless it is one of the files the command reads: `reads` holds (the flag that names it, the path
    as typed, or None), e.g. ("--input", "cat.png"), ("--baseline", "b.npy"). The same file by another name
    counts (./b.npy, a link, a hard link: os.path.samefile where both exist, else the resolved paths). A run must
    never overwrite what it reads; SpecError, one line naming both (`out` as `typed`, when given)."""
    for what, source in reads:
        if source is None or not os.fspath(source).strip():
            continue
        text = os.path.expanduser(os.fspath(source))
        if too_long(text) is not None or not os.path.isfile(text):
            continue  # nothing there to overwrite (isfile: False for a NUL)
        try:
            same = os.path.samefile(out, text) if os.path.exists(out) else out.resolve() == Path(text).resolve()
        except (OSError, RuntimeError):
            same = False
        if same:
            raise SpecError(f"{flag} {shown(typed or out)} is the {what} file {shown(os.fspath(source))}; write the result "
                            f"under another name.")
    return out


def inside(folder: str | os.PathLike, relative: str) -> Path | None:
    """`folder / relative` when it stays inside `folder` once resolved (links too); None when it is
    absolute, climbs out with `..`, or a link takes it out: a path read back from a file (an atlas, a
    session) never reaches outside the folder it belongs to."""
    if not isinstance(relative, str) or not relative or Path(relative).is_absolute():
        return None
    base = Path(folder).resolve()
    try:
        path = (base / relative).resolve()
    except (OSError, RuntimeError):
        return None
    return path if path == base or path.is_relative_to(base) else None
