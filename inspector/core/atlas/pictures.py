"""What the app's Atlas view shows of an atlas folder: the atlas, where its images are, and the
pictures of one channel's top images with the argmax region marked.

Run on the worker thread (they decode images); everything returned is plain data (dicts,
numpy arrays), safe to hand to the GUI thread.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from ..common.arguments import checked
from ..common.errors import AtlasError, InspectorError, SpecError
from ..folder_jobs import argmax_region, thumbnail_relative
from ..inputs.files import open_image
from ..storage.outputs import inside
from ..storage.paths import check_name
from ..sources.preprocess import Preprocess
from .owner import made_by, not_of
from .store import job_arguments, read_atlas

OUTSIDE = "outside the image folder: not shown"


@dataclass(frozen=True)
class OpenedAtlas:
    """An atlas read from `out_dir`: the atlas.json content, the image folder it was built over
    (from atlas.job.json; None when unknown) and the preprocessing its pictures went through."""

    out_dir: str
    atlas: dict
    data: str | None = None
    preprocess: dict | None = None
    built: dict | None = None  # what built it: model, weights, seed, preprocess (`owner.made_by`)

    def not_of(self, model) -> str | None:
        """None when `model` built this atlas; else why its pictures are not that model's channels."""
        return not_of(self.built or {"model": self.atlas.get("model")}, model)

    def layers(self) -> list[str]:
        return list(self.atlas["layers"])

    def channels(self, layer: str) -> int:
        return int(self.atlas["layers"][layer]["channels"])

    def image_path(self, relative: str) -> Path | None:
        """The file of a top entry, where the image folder is known and still holds it."""
        if self.data is None:
            return None
        path = inside(self.data, relative)  # an entry never reaches outside the image folder
        return path if path is not None and path.is_file() else None


@dataclass(frozen=True)
class TopPicture:
    """One of a channel's top images: its rank (0 = best), file (relative), score, argmax (y, x),
    the picture as the model saw it (H, W, 3 uint8; None when neither the image nor its thumbnail
    is there), the argmax region (left, top, right, bottom) in that picture (None: unknown), and
    what the picture is ("image", "thumbnail", or why there is none)."""

    rank: int
    image: str
    score: float
    y: int
    x: int
    rgb: np.ndarray | None
    box: tuple[int, int, int, int] | None
    shown: str


@checked
def open_atlas(out_dir: str | os.PathLike) -> OpenedAtlas:
    """Read the atlas in `out_dir` (an AtlasError when it is none), and where its images are."""
    out = Path(check_name(out_dir, "The atlas folder", AtlasError))
    if out.is_file():
        out = out.parent
    atlas = read_atlas(out)
    arguments = job_arguments(out)
    data, preprocess = arguments.get("data"), arguments.get("preprocess")
    if data is not None and not Path(data).is_dir():
        data = None
    return OpenedAtlas(str(out), atlas, data, preprocess, made_by(arguments, atlas))


@checked
def top_pictures(opened: OpenedAtlas, layer: str, channel: int) -> list[TopPicture]:
    """The top entries of `layer`'s channel `channel`, best first, each with its picture."""
    layers = opened.atlas["layers"]
    if layer not in layers:
        raise InspectorError(f"The atlas has no layer {layer} (it has {', '.join(layers)}).")
    channels = len(layers[layer]["top"])
    if not isinstance(channel, (int, np.integer)) or isinstance(channel, bool) or not 0 <= channel < channels:
        raise SpecError(f"channel must be a whole number from 0 to {channels - 1} ({layer} has {channels} "
                        f"channels), not {channel!r}.")
    entries = layers[layer]["top"][channel]
    prep = Preprocess(**{**opened.preprocess, "mean": tuple(opened.preprocess["mean"]),
                         "std": tuple(opened.preprocess["std"])}) if opened.preprocess else None
    out = []
    for rank, e in enumerate(entries):
        y, x = int(e["y"]), int(e["x"])
        rgb, box, shown = _picture(opened, prep, e["image"], layer, y, x)
        if rgb is None and not shown.endswith(OUTSIDE):  # an entry from outside is dropped, thumbnail and all
            thumb = inside(opened.out_dir, thumbnail_relative(layer, channel, rank))  # a layer named ../ stays in
            if thumb is not None and thumb.is_file():
                with Image.open(thumb) as im:
                    rgb, box, shown = np.asarray(im.convert("RGB")), None, "thumbnail"
        out.append(TopPicture(rank, e["image"], float(e["score"]), y, x, rgb, box, shown))
    return out


def _picture(opened: OpenedAtlas, prep, relative: str, layer: str, y: int, x: int):
    """(picture, box, "image") of a top entry as the model saw it, or (None, None, why not)."""
    if opened.data is not None and inside(opened.data, relative) is None:
        return None, None, f"{relative!r} is {OUTSIDE}"
    path = opened.image_path(relative)
    if path is None or prep is None:
        return None, None, "image folder not found" if path is None else "preprocessing unknown"
    try:
        rgb = prep.to_display(prep(open_image(path)))
    except InspectorError as exc:
        return None, None, str(exc)
    return rgb, argmax_box(opened.out_dir, layer, y, x), "image"


def argmax_box(out_dir, layer: str, y: int, x: int) -> tuple[int, int, int, int] | None:
    """The argmax's region (left, top, right, bottom) in the model's input, from the atlas's
    regions.json (None when the atlas has none for the layer)."""
    try:
        return argmax_region(out_dir, layer, y, x)
    except (OSError, KeyError, ValueError):
        return None
