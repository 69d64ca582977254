"""A folder of the data root as the server lists it (the `list` request): the app's folder and file choosers browse
the server's files with it on a remote engine, and a folder input steps through the images below one.

    body    {"path": a folder (relative: to the data root; "" is the root), "show": "images" | "all" | "nested"}
    result  {"root": the data root, "default_root": no --data-root (the folder the server was started in),
             "path": the folder listed, "parent": the folder above it (None at the root), "sep": the server's
             separator, "entries": [[name, is folder, size in bytes (None: a folder, or unreadable)], ...],
             "more": entries left off past the cap, "outside": entries left out (their link leads out of the root)}

`images`: the folder's folders and image files; `all`: every entry; both folders first, then by name, at most
MOST. `nested`: every image file below the folder (nested folders too, by `list_images`' rule: the order a folder
input steps through), named relative to it, at most NESTED_MOST. A folder outside the root, or a link that leads
out of it, is refused in one line (the data root's own rule, `DataRoot.check`, on the path as it is: no pattern).

The `summary` request (body {"path": an evaluation's folder}) is answered the same way, with that folder's
summary.json content (Open evaluation… in a window on this engine), or its one line where it holds no finished
evaluation.
"""

from __future__ import annotations

import os

from inspector.core.storage.paths import shown

from .data_root import DataRoot
from .errors import RefusedRequest

MOST = 5_000  # entries of one folder
NESTED_MOST = 100_000  # images below one folder


def listing(root: DataRoot, path: str, show: str, default_root: bool = False) -> dict:
    """What a `list` request of `path` is answered with (RefusedRequest, one line, for a folder it may not list)."""
    root.check(path, "The folder", pattern=False)
    folder = os.path.normpath(os.path.join(root.folder, path))
    if not os.path.isdir(folder):
        said = "is not a folder" if os.path.exists(folder) else "is not there"
        raise RefusedRequest(f"The folder {shown(path)} {said} on this server.")
    entries, outside = (_nested if show == "nested" else _entries)(root, folder, show)
    most = NESTED_MOST if show == "nested" else MOST
    at_root = os.path.realpath(folder) == root.folder
    return {"root": root.folder, "default_root": default_root, "path": folder,
            "parent": None if at_root else os.path.dirname(folder), "sep": os.sep,
            "entries": entries[:most], "more": max(0, len(entries) - most), "outside": outside}


def _entries(root: DataRoot, folder: str, show: str) -> tuple[list, int]:
    from inspector.core.inputs.files import IMAGE_SUFFIXES

    found, outside = [], 0
    try:
        with os.scandir(folder) as scan:
            listed = list(scan)
    except OSError as exc:
        raise RefusedRequest(f"The folder {shown(folder)} cannot be read on this server: "
                             f"{exc.strerror or exc}.") from None
    for entry in listed:
        if not root.holds(entry.path):
            outside += 1
            continue
        try:
            is_folder = entry.is_dir()  # a link: where it leads
        except OSError:
            is_folder = False
        if is_folder:
            found.append([entry.name, True, None])
        elif show == "all" or os.path.splitext(entry.name)[1].lower() in IMAGE_SUFFIXES:
            found.append([entry.name, False, _size(entry.path)])
    found.sort(key=lambda e: (not e[1], e[0].lower(), e[0]))
    return found, outside


def _nested(root: DataRoot, folder: str, show: str) -> tuple[list, int]:
    from inspector.core.common.errors import InputError
    from inspector.core.inputs.files import list_images

    try:
        images = list_images(folder)
    except InputError as exc:
        raise RefusedRequest(str(exc)) from None
    found, outside = [], 0
    for path in images.files:
        if root.holds(str(path)):
            found.append([images.relative(path), False, _size(str(path))])
        else:
            outside += 1
    return found, outside


def _size(path: str) -> int | None:
    try:
        return os.stat(path).st_size
    except OSError:
        return None


def summary(root: DataRoot, path: str) -> dict:
    """What a `summary` request of `path` is answered with: the summary.json of the finished evaluation there (an
    EvaluationError in one line where there is none; RefusedRequest for a folder outside the root)."""
    from inspector.core.evaluate.store import open_summary

    root.check(path, "The evaluation folder", pattern=False)
    return open_summary(os.path.normpath(os.path.join(root.folder, path)))


def answer(config, kind: str, key: str, body: dict, send) -> None:
    """Answer the `list` or `summary` request `key` through `send` (off the event loop: a big folder takes its
    time)."""
    from inspector.core.records.failure import failure
    from inspector.protocol.messages import Message

    root = config.root
    try:
        value = listing(root, body["path"], body["show"], config.root_is_default) if kind == "list" else \
            summary(root, body["path"])
    except Exception as exc:  # noqa: BLE001 - every failure is an answer: a client waits for one
        if isinstance(exc, RefusedRequest) and config.root_is_default and not root.holds(body["path"]):
            exc = RefusedRequest(f"{exc} (This server has no --data-root: its data root is the folder it was "
                                 f"started in.)")
        send(Message("failure", key, failure(exc, "files", 0)))
        return
    send(Message("result", key, value))
