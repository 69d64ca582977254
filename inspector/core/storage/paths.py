"""What a path the user typed names, checked before anything opens it: one rule and one message for every
reader and writer (the input, a video, a folder of images, the weights, a model or session file, `--out`).

Each message names the path as it was typed (never the absolute path it resolves to) and what is wrong with
it: a name too long for the system (checked first: `open` and `stat` would raise ENAMETOOLONG), a NUL byte,
nothing there, a folder where a file is wanted (or a file where a folder is), or something that is not a
regular file (a FIFO, a device, a socket, or a link to one such as `/dev/zero`). Nothing here opens the path:
opening a FIFO blocks until someone writes to it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..common.errors import InputError

#: What a name may hold when the system does not say (POSIX's NAME_MAX on every common file system).
NAME_MAX = 255
#: What a whole path may hold when the system does not say (Linux's PATH_MAX, the NUL included).
PATH_MAX = 4096

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def shown(text: str | os.PathLike) -> str:
    """The path as typed, for a message; a long one shortened in the middle (a 300-byte name stays one line)."""
    text = os.fspath(text)
    return text if len(text) <= 80 else f"{text[:40]}...{text[-30:]}"


def _limit(text: str, name: str) -> int:
    """The longest name the nearest existing folder above `text` takes (PC_NAME_MAX; NAME_MAX when unknown)."""
    folder = os.path.dirname(os.path.abspath(text))
    while True:
        try:
            return int(os.pathconf(folder, name))
        except (OSError, ValueError, AttributeError):  # not there (yet), too long itself, or no pathconf (Windows)
            above = os.path.dirname(folder)
            if above == folder:
                return NAME_MAX if name == "PC_NAME_MAX" else PATH_MAX
            folder = above


def too_long(text: str | os.PathLike) -> str | None:
    """Why `text` cannot name a file on this system (a name in it over PC_NAME_MAX bytes, or the whole path
    over PC_PATH_MAX), in words; None when its length is fine."""
    text = os.fspath(text)
    raw = os.fsencode(text)
    longest = max(raw.split(b"/"), key=len)
    if len(longest) > NAME_MAX or len(raw) >= PATH_MAX:  # only then ask the system (pathconf stats a folder)
        limit = _limit(text, "PC_NAME_MAX")
        if len(longest) > limit:
            return f"a name in it is {len(longest)} bytes long, and names here take at most {limit}"
        whole = _limit(text, "PC_PATH_MAX")
        if len(os.fsencode(os.path.abspath(text))) >= whole:
            return f"the path is {len(raw)} bytes long, and paths here take at most {whole - 1}"
    return None


def check_name(text: str | os.PathLike, what: str, error: type[Exception] = InputError) -> str:
    """`text` as a string when it could name a file here (no NUL byte, no name too long); `error` otherwise,
    one line naming `what` and the path as typed. Nothing is looked up on disk."""
    text = os.fspath(text)
    if "\x00" in text:
        raise error(f"{what} holds a NUL byte (\\x00), which no path can: {shown(text)!r}")
    why = too_long(text)
    if why is not None:
        raise error(f"{what} name too long: {shown(text)} ({why})")
    return text


def _what_it_is(text: str, mode: int) -> str:
    kind = next((words for test, words in _KINDS if test(mode)), "not a file or a folder")
    if os.path.islink(text):
        return f"a link to {os.path.realpath(text)}, {kind}"
    return kind


def in_the_way(text: str | os.PathLike) -> str | None:
    """What stands at `text` that a writer must not replace, in words (as `regular_file` says it): a FIFO, a device
    or a socket, a link to one of them, a link to nothing or a loop of links. None when nothing is there, when it is
    a regular file or a link to one (written through: the link stays, the file it names is replaced), or a folder
    (each writer says that its own way). Opens nothing."""
    try:
        os.lstat(text)
    except (OSError, ValueError):  # nothing there, or a path the write itself will refuse
        return None
    try:
        mode = os.stat(text).st_mode
    except FileNotFoundError:
        return f"a link to {os.readlink(text)}, which is not there"
    except OSError as exc:  # a loop of links
        return f"a link that cannot be followed: {exc.strerror or exc}"
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return _what_it_is(os.fspath(text), mode)


def _stat(text: str, what: str, error: type[Exception]) -> os.stat_result:
    try:
        return os.stat(text)  # follows links; opens nothing
    except FileNotFoundError:
        if os.path.islink(text):
            raise error(f"{what} not found: {shown(text)} (a link to {os.readlink(text)}, which is not there)") \
                from None
        raise error(f"{what} not found: {shown(text)}") from None
    except NotADirectoryError:
        raise error(f"{what} not found: {shown(text)} (a part of the path is a file, not a folder)") from None
    except OSError as exc:  # a loop of links, permission denied
        raise error(f"{what} cannot be read: {shown(text)} ({exc.strerror or exc})") from None


def regular_file(text: str | os.PathLike, what: str, error: type[Exception] = InputError) -> Path:
    """`text` as a Path when it names a regular file (or a link to one); `error` otherwise: one line naming
    `what` (e.g. "Input file"), the path as typed and what it is instead: a name too long, missing, a folder,
    a FIFO, a device or a socket (a link to `/dev/zero` is a link to a character device)."""
    text = check_name(text, what, error)
    mode = _stat(text, what, error).st_mode
    if stat.S_ISDIR(mode):
        raise error(f"{what} is a folder, not a file: {shown(text)}; name a file inside it")
    if not stat.S_ISREG(mode):
        raise error(f"{what} is not a regular file: {shown(text)} ({_what_it_is(text, mode)})")
    return Path(text)


def folder(text: str | os.PathLike, what: str, error: type[Exception] = InputError) -> Path:
    """`text` as a Path when it names a folder (or a link to one); `error` otherwise, as `regular_file`."""
    text = check_name(text, what, error)
    mode = _stat(text, what, error).st_mode
    if not stat.S_ISDIR(mode):
        kind = "a file" if stat.S_ISREG(mode) else _what_it_is(text, mode)
        raise error(f"{what} is not a folder: {shown(text)} ({kind})")
    return Path(text)


def is_folder(text: str | os.PathLike) -> bool:
    """Whether `text` names a folder; False, never an error, for a name too long or one with a NUL byte."""
    try:
        return os.path.isdir(text)
    except (OSError, ValueError):
        return False
