"""What the server's file dialog shows and gives back, Qt-free (`server_dialog.ServerDialog` draws it): the folder of
the server's data root listed (the protocol's `list` answer), its rows, and the server path chosen.

A folder chooser lists a folder's folders and images (`show` "images"; "all" with All files); a file chooser every
entry, the files its patterns match offered (`*.pt`, from the Qt filter text), all of them with All files. The server
does every path's arithmetic (a folder's parent, what is inside the root): here a path is the server's text, a child
its folder, its separator and its name.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    name: str
    folder: bool
    size: int | None  # bytes (None: a folder, or a file the server could not read)

    def size_text(self) -> str:
        return "" if self.size is None else sized(self.size)


def sized(count: int) -> str:
    """`count` bytes in words: 812 B, 3.4 KB, 12.0 MB (powers of 1024, as the file managers say)."""
    value, unit = float(count), "B"
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if value < 1024 or unit == "TB":
            break
        value /= 1024
    return f"{count} B" if unit == "B" else f"{value:.1f} {unit}"


def patterns_of(filters: str) -> tuple[str, ...]:
    """The name patterns of a Qt filter text ("Weights (*.safetensors *.pt)" -> ("*.safetensors", "*.pt"))."""
    return tuple(re.findall(r"\*\.[^\s;)]+", filters))


class ServerBrowsing:
    """`ask(path, show)` sends a listing of the server's folder `path` (its answer, a listing or a Failure, is given
    to `answered`); `folders`: a folder is chosen, else a file; `patterns`: the file names a file chooser offers."""

    def __init__(self, ask, folders: bool, patterns: tuple[str, ...] = ()) -> None:
        self.ask, self.folders, self.patterns = ask, folders, tuple(patterns)
        self.every_file = False  # All files: every file listed, not just images (folders) or the patterns (files)
        self.listing: dict | None = None  # the server's answer for the folder shown
        self.waiting: str | None = None  # the folder asked for, not answered yet
        self._next: str | None = None  # the folder asked for while another was: asked once that one is answered
        self.said = ""  # the server's one line on the last folder asked for, when it was refused

    @property
    def path(self) -> str:
        """The server folder shown ("" until the first listing came)."""
        return self.listing["path"] if self.listing is not None else ""

    def show(self) -> str:
        return "images" if self.folders and not self.every_file else "all"

    def open(self, path: str) -> None:
        """List the server's folder `path` ("" is the data root; relative: inside it). One listing is asked at a
        time, so each answer is the one asked for: a folder asked for meanwhile is asked next (the last one)."""
        if self.waiting is not None:
            self._next = path
            return
        self.waiting = path
        self.ask(path, self.show())

    def set_every_file(self, every: bool) -> None:
        self.every_file = bool(every)
        if self.listing is not None and self.folders:
            self.open(self.path)  # images only or every entry: the server lists them

    def answered(self, found) -> None:
        """A listing (the server's dict) or the Failure it was refused with (the folder shown stays)."""
        self.waiting, following, self._next = None, self._next, None
        if following is not None:  # a folder asked for since: this answer is of one left behind
            self.open(following)
            return
        if isinstance(found, dict):
            self.listing, self.said = found, ""
        else:
            self.said = getattr(found, "message", str(found))

    def rows(self) -> list[Row]:
        """The folder's rows: its folders, then the files offered."""
        if self.listing is None:
            return []
        rows = [Row(*entry) for entry in self.listing["entries"]]
        return [r for r in rows if r.folder or self.folders or self.every_file or not self.patterns
                or any(fnmatch.fnmatch(r.name.lower(), p.lower()) for p in self.patterns)]

    def child(self, name: str) -> str:
        """The server path of `name` in the folder shown."""
        sep = self.listing["sep"]
        return self.path.rstrip(sep) + sep + name if self.path.rstrip(sep) else sep + name

    def up(self) -> bool:
        """List the folder above (False at the data root: nothing above it may be listed)."""
        parent = self.listing["parent"] if self.listing is not None else None
        if parent is None:
            return False
        self.open(parent)
        return True

    def chosen(self, selected: Row | None) -> str:
        """The server path OK gives back ("" when nothing can be): a folder chooser the selected folder, else the
        folder shown; a file chooser the selected file."""
        if self.listing is None:
            return ""
        if self.folders:
            return self.child(selected.name) if selected is not None and selected.folder else self.path
        return self.child(selected.name) if selected is not None and not selected.folder else ""

    def where(self) -> str:
        """The line under the list: the data root, and what the server left out."""
        if self.listing is None:
            return ""
        found = self.listing
        root = f"Data root on the server: {found['root']}"
        if found.get("default_root"):
            root += " (the folder it was started in: no --data-root)"
        notes = []
        if found["more"]:
            notes.append(f"{found['more']} more {'entry' if found['more'] == 1 else 'entries'} not listed")
        if found["outside"]:
            notes.append(f"{found['outside']} {'link' if found['outside'] == 1 else 'links'} out of the data root "
                         f"left out")
        return root + ("; " + "; ".join(notes) if notes else "") + "."
