"""A folder of images as the app's input, stepped through one image at a time.

Which files and in which order is `inspector.core.inputs.files.list_images` (the CLI's and the
atlas's rule too); this module is torch-free and imports it only when a folder is opened.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..storage.paths import folder as existing_folder
from .files import list_images


@dataclass(frozen=True)
class FolderInput:
    """A folder being stepped through: its root, its image files (relative) and the one shown."""

    root: str
    files: tuple[str, ...]
    index: int = 0

    @classmethod
    def open(cls, folder: str | Path) -> "FolderInput":
        """The image files under `folder`; InputError when it is not a folder or holds none."""
        existing_folder(folder, "Image folder")
        images = list_images(folder)
        return cls(str(images.root), tuple(images.relative(p) for p in images.files))

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
