"""The files of a job folder that every kind of job keeps alike: the lock that lets one process build there, the
compact JSON written whole, the .npz read header first, and the refusal of what is not a regular file."""

from __future__ import annotations

import json
import os
import socket
import time
import zipfile
from pathlib import Path

import numpy as np

from ..storage import writes
from ..common.errors import AtlasError

LOCK_FILE = "atlas.lock"


class JobLock:
    """OUT_DIR/atlas.lock: one job builds in a folder at a time. It holds the process id, host and
    start time; a lock whose process is gone (on this host) is stale and taken over."""

    def __init__(self, out: Path, name: str = LOCK_FILE) -> None:
        self.path = Path(out) / name  # `name`: another job's lock (the concepts' pass keeps its own)
        self.held = False

    def __enter__(self) -> "JobLock":
        writes.make_folder(self.path.parent)
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                if self.path.is_dir() or (self.path.exists() and not self.path.is_file()):
                    what = "a folder" if self.path.is_dir() else "not a regular file"
                    raise AtlasError(f"{self.path} is {what}, not a lock; move or delete it.") from None
                holder = self._holder()
                if holder is not None:
                    raise AtlasError(f"{self.path.parent} is being built by process {holder['pid']} on "
                                     f"{holder['host']} (since {holder['since']}); wait for it to finish or stop "
                                     f"it, or choose another --out.") from None
                self.path.unlink(missing_ok=True)  # stale: its process is gone
                continue
            except OSError as exc:
                raise AtlasError(f"Cannot take the lock {self.path}: {writes.reason(exc)}.") from None
            with os.fdopen(fd, "w") as file:
                json.dump({"pid": os.getpid(), "host": socket.gethostname(),
                           "since": time.strftime("%Y-%m-%d %H:%M:%S")}, file)
            self.held = True
            return self
        raise AtlasError(f"Cannot take the lock {self.path}; another process keeps taking it.")

    def _holder(self) -> dict | None:
        """Who holds the lock, or None when it is stale (its process is gone, or the file is unreadable)."""
        try:
            holder = json.loads(self.path.read_text(encoding="utf-8"))
            pid, host = int(holder["pid"]), str(holder["host"])
        except (OSError, ValueError, KeyError, TypeError):
            # being written this very moment by the other process, or damaged: wait a little once
            time.sleep(0.2)
            try:
                holder = json.loads(self.path.read_text(encoding="utf-8"))
                pid, host = int(holder["pid"]), str(holder["host"])
            except (OSError, ValueError, KeyError, TypeError):
                return None
        if host != socket.gethostname():
            return holder  # another machine's process: it cannot be checked from here
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass  # alive, another user's
        return holder

    def __exit__(self, *_exc) -> None:
        if self.held:
            self.path.unlink(missing_ok=True)
            self.held = False


#: deflate makes at most about 1032 bytes of one: a member that says it holds more is damaged
_DEFLATE_RATIO = 1032


def npz_headers(path: Path) -> dict[str, tuple[tuple, np.dtype]]:
    """Each member's (shape, dtype) of an .npz, from the .npy headers alone (no data read); ValueError when a
    header is damaged or declares more data than its member holds."""
    out = {}
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            if not info.filename.endswith(".npy"):
                continue
            if info.compress_type != zipfile.ZIP_STORED and info.file_size > _DEFLATE_RATIO * info.compress_size + 1024:
                raise ValueError(f"{info.filename} says it holds {info.file_size} bytes in {info.compress_size}")
            with archive.open(info) as member:
                version = np.lib.format.read_magic(member)
                if version == (1, 0):
                    shape, fortran, dtype = np.lib.format.read_array_header_1_0(member)
                elif version == (2, 0):
                    shape, fortran, dtype = np.lib.format.read_array_header_2_0(member)
                else:
                    raise ValueError(f"{info.filename} is an .npy of format {version}")
                if dtype.hasobject:
                    raise ValueError(f"{info.filename} holds Python objects")
                declared = int(np.prod(shape, dtype=object)) * dtype.itemsize
                if declared > info.file_size - member.tell():
                    raise ValueError(f"{info.filename}'s header declares {declared} bytes, it holds "
                                     f"{info.file_size - member.tell()}")
            out[info.filename[:-4]] = (tuple(int(n) for n in shape), dtype)
    return out


def read_member(path: Path, name: str) -> np.ndarray:
    """One array of an .npz (its header already checked by `npz_headers`)."""
    with np.load(path, allow_pickle=False) as arrays:
        return np.array(arrays[name])


def not_a_file(path: Path) -> None:
    """AtlasError when something other than a regular file is where the atlas keeps one of its files: a folder
    is not removed, not even by --restart."""
    if path.is_dir():
        raise AtlasError(f"{path} is a folder, not a file of the atlas; move or delete that folder.")
    if path.exists() and not path.is_file():
        raise AtlasError(f"{path} is not a regular file; move or delete it.")


def write_json(path: Path, value) -> None:
    """Whole or not at all (inspector.core.storage.writes); compact, so that the C encoder writes a large atlas quickly."""
    writes.write_json(path, value, separators=(",", ":"))


def read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise AtlasError(f"Cannot read {path}: {exc}") from None
    except RecursionError:
        raise AtlasError(f"Cannot read {path}: it is nested too deeply.") from None


