"""The bundled sample inputs by name (`sample:NAME`), and the file an input names; torch-free, so the window
can list the samples at once and the CLI says a wrong input before torch is imported and the model loads."""

from __future__ import annotations

import os
from pathlib import Path

from inspector.demo.paths import samples_dir

from ..common.arguments import need_path
from ..common.errors import InputError
from ..storage.paths import regular_file
from .image_sets import IMAGE_SUFFIXES
from .video import VIDEO_SUFFIXES

TENSOR_SUFFIXES = (".npy", ".pt", ".pth")


def list_samples() -> list[str]:
    """Names usable as `sample:NAME` (images and tensors under resources/samples)."""
    folder = samples_dir()
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.iterdir() if p.suffix.lower() in (".png", ".npy"))


def resolve_sample(name: str) -> Path:
    folder = samples_dir()
    for suffix in (".png", ".npy", ".jpg"):
        path = folder / f"{name}{suffix}"
        if path.is_file():
            return path
    raise InputError(f"No sample named {name!r}. Samples: {', '.join(list_samples()) or 'none found'}.")


def input_file(source: str | os.PathLike) -> Path:
    """The file an input names: a sample's (`sample:NAME`) or the path given, a regular file; InputError else."""
    text = need_path(source, "The input")
    if not text.strip():
        raise InputError("No input given: name an image, sample:NAME, or a .npy/.pt tensor file.")
    return resolve_sample(text[7:]) if text.startswith("sample:") else regular_file(text, "Input file")


def names_a_folder(source: str) -> bool:
    """What its name alone says of an input this machine cannot look at (a file of a remote engine's server): a
    folder to step through, unless it is a sample, a camera, or a file of a kind an input is (an image, a tensor, a
    video)."""
    return not (source.startswith(("sample:", "camera:"))
                or source.lower().endswith(IMAGE_SUFFIXES + TENSOR_SUFFIXES + VIDEO_SUFFIXES))
