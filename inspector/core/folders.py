"""A folder of images as an input: its image files, nested folders included, in one sorted order.

Torch-free, so the app's window can list a folder before the engine has loaded.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError

#: The image files a folder is read for (what `core.inputs.open_image` decodes).
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp", ".gif")


def list_images(folder: str | Path) -> list[str]:
    """The image files under `folder` as POSIX paths relative to it, sorted (case-sensitive, by
    path parts, so `a/z.png` comes before `b.png`); hidden files and folders are left out.
    Raises InputError for a path that is not a folder or a folder with no image in it."""
    root = Path(folder)
    if not root.is_dir():
        raise InputError(f"Not a folder: {root}")
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        rel = Path(dirpath).relative_to(root)
        for name in filenames:
            if not name.startswith(".") and name.lower().endswith(IMAGE_SUFFIXES):
                found.append((rel / name).parts)
    if not found:
        raise InputError(f"No image files in {root} (looked for {', '.join(IMAGE_SUFFIXES)}, nested folders too).")
    return ["/".join(parts) for parts in sorted(found)]


@dataclass(frozen=True)
class FolderInput:
    """A folder being stepped through: its root, its image files (relative) and the one shown."""

    root: str
    files: tuple[str, ...]
    index: int = 0

    @classmethod
    def open(cls, folder: str | Path) -> "FolderInput":
        return cls(str(Path(folder)), tuple(list_images(folder)))

    def __len__(self) -> int:
        return len(self.files)

    @property
    def relative(self) -> str:
        return self.files[self.index]

    @property
    def path(self) -> str:
        return str(Path(self.root) / self.relative)

    def at(self, index: int) -> "FolderInput":
        """The same folder showing image `index` (clamped to the first and last)."""
        return FolderInput(self.root, self.files, max(0, min(index, len(self.files) - 1)))

    def index_of(self, path: str) -> int | None:
        """Where the file `path` is in the folder (None: not one of its images)."""
        try:
            rel = Path(path).relative_to(self.root).as_posix()
        except ValueError:
            return None
        return self.files.index(rel) if rel in self.files else None

    def label(self) -> str:
        return f"{self.index + 1} of {len(self.files)}: {self.relative}"
