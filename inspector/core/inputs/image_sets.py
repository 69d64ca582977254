"""The images of a folder (nested folders too) or a glob, as the atlas and `capture` of many images read
them; torch-free, so the CLI says a folder without images before torch is imported and the model loads."""

from __future__ import annotations

import collections
import fnmatch
import glob
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..common.errors import InputError
from ..storage.paths import check_name

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp", ".gif")


@dataclass(frozen=True)
class ImageSet:
    """The image files of a folder (nested folders included) or a glob, sorted by relative path."""

    root: Path  # what `relative` paths start from: the folder, or the glob's fixed leading part
    files: tuple[Path, ...]

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def __len__(self) -> int:
        return len(self.files)


def is_image_set(source: str | Path) -> bool:
    """Whether `source` names many images: an existing folder or a glob pattern."""
    text = str(source)
    return os.path.isdir(text) or (glob.has_magic(text) and not text.startswith("sample:"))


def list_images(source: str | Path, exclude: Path | None = None) -> ImageSet:
    """Every image file (by suffix: PNG, JPEG, BMP, TIFF, WebP, GIF) of a folder, nested folders
    included (ImageFolder layout or flat), or matching a glob (`data/**/*.png`), in sorted order of
    their paths relative to the folder. InputError when there is none.

    One rule for both forms: a linked folder is followed once (by the folder it resolves to), never
    round a loop; a link to a file that is not there (broken, or a loop of links) is listed, so that
    reading it fails with its reason where the other unreadable files are reported. `exclude`: a
    folder left out (an output folder inside the data)."""
    text = check_name(str(source), "The data")
    if os.path.isdir(text):
        root, match = Path(text), None
    elif glob.has_magic(text):
        parts = Path(text).parts
        fixed = next(i for i, part in enumerate(parts) if glob.has_magic(part))
        root = Path(*parts[:fixed]) if fixed else Path(".")
        match = _glob_pattern(parts[fixed:])
    else:
        raise InputError(f"Not a folder or a glob pattern: {text}")
    skip = exclude.resolve() if exclude is not None else None
    found = []
    for path, relative in _walk(root, skip):
        if path.suffix.lower() in IMAGE_SUFFIXES and (match is None or match.match(relative)):
            found.append((relative, path))
    files = tuple(path for _, path in sorted(found))
    if not files:
        raise InputError(f"No images in {text} (looked for {', '.join(IMAGE_SUFFIXES)}"
                         f"{', in nested folders too' if Path(text).is_dir() else ''}).")
    return ImageSet(root, files)


def _walk(root: Path, skip: Path | None):
    """(path, relative posix path) of every file below `root`, following each real folder once."""
    seen = set()
    pending = collections.deque([(root, "")])  # breadth first, by name: the first way to a folder is kept
    while pending:
        folder, prefix = pending.popleft()
        try:
            real = folder.resolve()
        except (OSError, RuntimeError):
            continue
        if real in seen or (skip is not None and real == skip):
            continue  # a loop, a folder reached twice through links, or the excluded folder
        seen.add(real)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            relative = prefix + entry.name
            path = folder / entry.name
            try:
                is_dir = entry.is_dir()  # follows links
            except OSError:
                is_dir = False  # a loop of links
            if is_dir:
                pending.append((path, relative + "/"))
            else:  # a file, or a broken link or loop of links: listed, reading it says why
                yield path, relative


def _glob_pattern(parts: tuple[str, ...]) -> re.Pattern:
    """A regex for relative posix paths, as `glob` matches them: `*` and `?` within one name (not a
    leading dot), `**` any number of folders."""
    out = []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "**":
            out.append("(?:[^/.][^/]*/)*" + ("[^/.][^/]*" if last else ""))
            continue
        rx = fnmatch.translate(part)  # '(?s:...)\\Z'
        rx = rx[rx.index(":") + 1: rx.rindex(")")].replace(".*", "[^/]*").replace("(?s:", "(?:")
        if not part.startswith("."):
            rx = "(?!\\.)" + rx
        out.append(rx + ("" if last else "/"))
    return re.compile("".join(out) + "\\Z", re.S)
