"""The one writer: every file the product writes is whole or not there at all.

A file goes to a temporary file in its own folder and is renamed into place only once it is
complete (flushed and fsynced, so a crash or power cut leaves the old file or the new one, never
half of one). When the disk is full, a file-size limit is hit, the folder is read-only or not
ours, the temporary file is removed, a file that was there before is untouched, and the caller
gets a `WriteError`: one line naming the file and the reason. The CLI, the API and the app all
write through here (`write_bytes`, `write_text`, `write_json`, `save_npz`, `save_npy`,
`save_image`, or `atomic_file` for a writer that wants a file object).
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import tempfile
from pathlib import Path
from typing import IO, Iterator

import numpy as np

from ..common.errors import WriteError
from .paths import in_the_way, shown, too_long

#: errno -> what it means for the person whose file was not written.
REASONS = {
    errno.ENOSPC: "the disk is full",
    errno.EFBIG: "the file is larger than this system allows",
    errno.EDQUOT: "the disk quota is used up",
    errno.EROFS: "the disk is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "not permitted",
    errno.ENOENT: "the folder does not exist",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EISDIR: "it is a folder",
    errno.ENAMETOOLONG: "the name is too long",
}


def reason(exc: OSError) -> str:
    return REASONS.get(exc.errno, exc.strerror or str(exc))


def _mode_for(path: Path) -> int:
    """The permissions the file would get if written in place: the old file's, or 0o666 less the umask."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike, mode: str = "wb", encoding: str | None = None,
                fsync: bool = True) -> Iterator[IO]:
    """A file object to write `path` through; renamed into place when the block ends without an error.

    Missing parent folders are made. Only a regular file is replaced: a FIFO, a device, a socket, a link to one
    or a link to nothing is a WriteError saying what it is (`paths.in_the_way`), and a link to a regular file is
    written through (the link stays, the file it names is replaced). On any error the temporary file is removed
    and `path` is left as it was; an OSError becomes a WriteError naming `path` and the reason."""
    path = Path(path)
    tmp: Path | None = None
    _name_fits(path, "Could not write")
    _no_file_above(path)
    kind = in_the_way(path)
    if kind is not None:
        raise WriteError(f"Could not write {shown(path)}: it is not a regular file ({kind}).", path)
    target = Path(os.path.realpath(path)) if path.is_symlink() else path  # os.replace would replace the link
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        tmp = Path(name)
        with os.fdopen(fd, mode, encoding=encoding) as file:
            yield file
            file.flush()
            if fsync:
                os.fsync(file.fileno())
        os.chmod(tmp, _mode_for(target))
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        raise WriteError(f"Could not write {path}: {reason(exc)}.", path, exc.errno) from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                tmp.unlink()


def _name_fits(path: Path, doing: str) -> None:
    """WriteError when a name in `path` is longer than the system takes (open would raise ENAMETOOLONG, and
    the folders above it could not even be looked at)."""
    why = too_long(path)
    if why is not None:
        raise WriteError(f"{doing} {shown(path)}: {REASONS[errno.ENAMETOOLONG]} ({why}).", path, errno.ENAMETOOLONG)


def _no_file_above(path: Path) -> None:
    """WriteError when a file stands where a folder above `path` must be."""
    above = path.parent
    while not above.exists() and above.parent != above:
        above = above.parent
    if above.exists() and not above.is_dir():
        raise WriteError(f"Could not write {path}: {above} is a file, not a folder.", path, errno.ENOTDIR)


def make_folder(path: str | os.PathLike) -> Path:
    """`path` and the folders above it, or a WriteError naming it and the reason."""
    path = Path(path)
    _name_fits(path, "Could not make the folder")
    _no_file_above(path / "_")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WriteError(f"Could not make the folder {path}: {reason(exc)}.", path, exc.errno) from None
    return path


def write_bytes(path: str | os.PathLike, data: bytes, fsync: bool = True) -> Path:
    with atomic_file(path, "wb", fsync=fsync) as file:
        file.write(data)
    return Path(path)


def write_text(path: str | os.PathLike, text: str, fsync: bool = True) -> Path:
    with atomic_file(path, "w", encoding="utf-8", fsync=fsync) as file:
        file.write(text)
    return Path(path)


def write_json(path: str | os.PathLike, value, fsync: bool = True, **dump) -> Path:
    """`value` as JSON (`dump`: json.dumps's options), a newline at the end."""
    return write_text(path, json.dumps(value, **dump) + "\n", fsync=fsync)


def save_npz(path: str | os.PathLike, arrays: dict[str, np.ndarray], fsync: bool = True) -> Path:
    """`arrays` as an uncompressed .npz at exactly `path` (no suffix added)."""
    with atomic_file(path, "wb", fsync=fsync) as file:
        np.savez(file, **arrays)
    return Path(path)


def save_npy(path: str | os.PathLike, array: np.ndarray, fsync: bool = True) -> Path:
    with atomic_file(path, "wb", fsync=fsync) as file:
        np.save(_Chunks(file), np.asarray(array))
    return Path(path)


class _Chunks:
    """`file` as numpy sees a file-like object: np.save then writes it in chunks through `write`, whose failure
    is the system's OSError (ENOSPC, EFBIG: the reason every other file gives). Given the file itself, numpy
    writes with ndarray.tofile, whose short write is an OSError without an errno ("50176 requested and 50144
    written")."""

    def __init__(self, file: IO) -> None:
        self.write = file.write


def save_image(path: str | os.PathLike, image, fsync: bool = True, **options) -> Path:
    """A PIL image, its format from `path`'s ending (`options`: PIL's, e.g. compress_level)."""
    from PIL import Image

    path = Path(path)
    Image.init()
    fmt = Image.registered_extensions().get(path.suffix.lower())
    if fmt is None:
        raise WriteError(f"Could not write {path}: no picture format ends in {path.suffix or '(nothing)'}.", path)
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **options)
    return write_bytes(path, buffer.getvalue(), fsync=fsync)
