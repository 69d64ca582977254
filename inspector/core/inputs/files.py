"""One function turns a file (or `sample:NAME`) into the model's input; CLI, API and app share it."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import torch
from PIL import Image, ImageOps, UnidentifiedImageError

from ..common.arguments import checked
from ..common.errors import InputError
from ..storage.paths import regular_file
from ..sources.preprocess import Preprocess
from ..sources.checkpoints import load_weights_only, unsafe_globals
from .image_sets import IMAGE_SUFFIXES, ImageSet, is_image_set, list_images  # noqa: F401 (read from here too)
from .samples import TENSOR_SUFFIXES, input_file, resolve_sample, samples_dir  # noqa: F401 (read from here too)

BACKGROUND = (255, 255, 255)


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
    path = input_file(source)
    if path.suffix.lower() in TENSOR_SUFFIXES:
        tensor = load_tensor(path)
        if input_shape and tensor.ndim == len(input_shape) - 1:
            tensor = tensor[None]
        return tensor
    return input_preprocess(preprocess, input_shape)(open_image(path))


def input_preprocess(preprocess: Preprocess | None, input_shape: tuple[int, ...] | None) -> Preprocess:
    """The preprocessing images get: the model's own, else a resize and crop to its default input size."""
    if preprocess is not None:
        return preprocess
    if input_shape and len(input_shape) == 4:
        return Preprocess(resize=input_shape[-1], crop=input_shape[-1])
    return Preprocess()
