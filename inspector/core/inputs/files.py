"""One function turns a file (or `sample:NAME`) into the model's input; CLI, API and app share it."""

from __future__ import annotations

import collections
import fnmatch
import glob
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from PIL import Image, ImageOps, UnidentifiedImageError

from ..arguments import checked, need_path
from ..errors import InputError
from ..paths import check_name, regular_file
from ..preprocess import Preprocess
from ..sources.checkpoints import load_weights_only, unsafe_globals
from .samples import list_samples

TENSOR_SUFFIXES = (".npy", ".pt", ".pth")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp", ".gif")
BACKGROUND = (255, 255, 255)


def samples_dir() -> Path:
    from inspector.demo.paths import resources_dir

    return resources_dir() / "samples"


def resolve_sample(name: str) -> Path:
    folder = samples_dir()
    for suffix in (".png", ".npy", ".jpg"):
        path = folder / f"{name}{suffix}"
        if path.is_file():
            return path
    raise InputError(f"No sample named {name!r}. Samples: {', '.join(list_samples()) or 'none found'}.")


def open_image(path: str | Path) -> Image.Image:
    """An RGB picture from any common format: EXIF rotation applied, odd modes converted."""
    path = regular_file(path, "Input file")
    if path.stat().st_size == 0:
        raise InputError(f"{path.name} is empty (0 bytes).")  # the name only, as the other reasons
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as image:
                image.seek(0)  # GIF, TIFF, WebP: the first frame
                image.load()
                image = ImageOps.exif_transpose(image)
                return to_rgb(image)
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise InputError(f"{path.name} is too large to open safely (decompression bomb check): {exc}") from None
    except UnidentifiedImageError:
        raise InputError(f"{path.name} is not an image this tool can read (PNG, JPEG, BMP, TIFF, WebP, GIF).") from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise InputError(f"{path.name} is damaged or truncated: {exc}") from None


def to_rgb(image: Image.Image) -> Image.Image:
    """Convert any PIL mode to RGB: 16-bit and float rescaled to the full range, alpha composited."""
    mode = image.mode
    if mode == "RGB":
        return image
    if mode in ("I;16", "I;16B", "I;16L", "I;16N", "I", "F"):
        values = np.asarray(image, dtype=np.float64)
        finite = values[np.isfinite(values)]
        if mode.startswith("I;16"):
            lo, hi = 0.0, 65535.0
        elif finite.size:
            lo, hi = float(finite.min()), float(finite.max())
        else:
            lo, hi = 0.0, 1.0
        scaled = (np.nan_to_num(values, nan=lo) - lo) / max(hi - lo, 1e-12)
        gray = (np.clip(scaled, 0, 1) * 255 + 0.5).astype(np.uint8)
        return Image.fromarray(gray, "L").convert("RGB")
    if mode == "P":
        image = image.convert("RGBA" if "transparency" in image.info else "RGB")
    elif mode in ("LA", "La", "PA", "RGBa"):
        image = image.convert("RGBA")
    if image.mode == "RGBA":
        background = Image.new("RGB", image.size, BACKGROUND)
        background.paste(image, mask=image.getchannel("A"))
        return background
    return image.convert("RGB")  # 1, L, CMYK, YCbCr, LAB, HSV


def load_tensor(path: Path) -> torch.Tensor:
    """A tensor from `.npy` (no pickles) or `.pt`/`.pth` (torch's weights-only reader; a file whose
    pickle would import code is refused, never run)."""
    import pickle

    try:
        if path.suffix.lower() == ".npy":
            try:
                array = np.load(path, allow_pickle=False)
            except ValueError as exc:
                if "pickle" not in str(exc):
                    raise
                raise InputError(f"{path.name} holds pickled Python objects, which could run code when loaded: "
                                 f"refused. Save a numeric array (np.save of a float or integer array).") from None
            if array.dtype == np.float64:
                array = array.astype(np.float32)
            tensor = torch.from_numpy(np.ascontiguousarray(array))
        else:
            tensor = load_weights_only(path)
    except InputError:
        raise
    except pickle.UnpicklingError:
        names = unsafe_globals(path)
        if names is None:
            raise InputError(f"{path.name} is not a tensor file this tool can read: it is damaged, or was not "
                             f"written by torch.save or np.save.") from None
        what = f" ({', '.join(names)})" if names else ""
        raise InputError(f"{path.name} is a pickle that would import code when loaded{what}: refused, as "
                         f"loading it could run anything. Save the input as a plain tensor "
                         f"(torch.save(tensor, ...)) or as .npy.") from None
    except Exception as exc:
        raise InputError(f"Cannot read tensor file {path.name}: {type(exc).__name__}: {exc}") from None
    if not isinstance(tensor, torch.Tensor):
        raise InputError(f"{path.name} holds a {type(tensor).__name__}, not a tensor.")
    return tensor


@checked
def load_input(source: str | os.PathLike, preprocess: Preprocess | None = None,
               input_shape: tuple[int, ...] | None = None) -> torch.Tensor:
    """A file or `sample:NAME` -> the model's input tensor (batch dimension included)."""
    text = need_path(source, "The input")
    if not text.strip():
        raise InputError("No input given: name an image, sample:NAME, or a .npy/.pt tensor file.")
    path = resolve_sample(text[7:]) if text.startswith("sample:") else regular_file(text, "Input file")
    if path.suffix.lower() in TENSOR_SUFFIXES:
        tensor = load_tensor(path)
        if input_shape and tensor.ndim == len(input_shape) - 1:
            tensor = tensor[None]
        return tensor
    return input_preprocess(preprocess, input_shape)(open_image(path))


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


def input_preprocess(preprocess: Preprocess | None, input_shape: tuple[int, ...] | None) -> Preprocess:
    """The preprocessing images get: the model's own, else a resize and crop to its default input size."""
    if preprocess is not None:
        return preprocess
    if input_shape and len(input_shape) == 4:
        return Preprocess(resize=input_shape[-1], crop=input_shape[-1])
    return Preprocess()
