"""The one folder a server's clients may name files in: every path a request names (a model file, weights, an
input, a dictionary folder) must resolve, links followed, inside it.

The server works in that folder, so a relative path is read from it; `~` is refused as well as followed, so a
name means one thing to this check and to the engine.
"""

from __future__ import annotations

import glob
import os

from inspector.core.storage.paths import shown

from .errors import RefusedRequest


class DataRoot:
    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = os.path.realpath(folder)
        if not os.path.isdir(self.folder):
            raise RefusedRequest(f"The data root {shown(folder)} is not a folder.")

    def holds(self, path: str) -> bool:
        """`path` (relative: to the root) resolves, links followed, inside the root."""
        try:
            forms = {path, os.path.expanduser(path)}
            resolved = [os.path.realpath(os.path.join(self.folder, p)) for p in forms]
        except (ValueError, OSError):  # a NUL byte, a name the system refuses
            return False
        return all(r == self.folder or r.startswith(self.folder.rstrip(os.sep) + os.sep) for r in resolved)

    def check(self, path: str, what: str, pattern: bool = True) -> None:
        """RefusedRequest (one line) unless `path` is inside the root; a glob's fixed part and what it may
        match are both held to it (`pattern` False: `path` is a name as it is, `*` and all: a folder listed)."""
        if not isinstance(path, str):
            raise RefusedRequest(f"{what} is a path in text, not a {type(path).__name__}.")
        fixed = path
        if pattern and glob.has_magic(path):
            parts = path.split(os.sep)
            if ".." in parts:
                raise RefusedRequest(f"{what} {shown(path)} is a pattern with '..' in it: refused on this server.")
            first = next(i for i, part in enumerate(parts) if glob.has_magic(part))
            fixed = os.sep.join(parts[:first]) or ("/" if path.startswith(os.sep) else ".")
        if not self.holds(fixed):
            raise RefusedRequest(f"{what} {shown(path)} is outside this server's data root ({self.folder}): "
                                 f"refused.")

    def __str__(self) -> str:
        return self.folder
