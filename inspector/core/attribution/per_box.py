"""Every box a detector shows, explained one at a time under one method, and the maps tiled side by side:
`attribute --each-box`, `each_box()` in the API, and the rule the Attribution tab's "Each box" follows.

Each box is explained alone (its own `box:K` target) and each map is scaled on its own, so a large box never
shadows the others. The boxes are those shown over the input: scoring at least `min_score` (default: as
the app's slider starts), the best `most` of them (inspector.core.detection.picture.boxes_to_explain)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import torch
from PIL import Image, ImageDraw, ImageFont
from torch import nn

from ..common.arguments import need_count, need_instance, need_list
from ..detection.outputs import detections_of, is_detection_output
from ..detection.picture import EACH_BOX_MOST, boxes_to_explain, default_min_score, draw_detections, fitted, text_width
from ..common.errors import SpecError
from ..engine.export import enlarged, overlay, picture_scale
from ..records.detections import Detection
from ..records.methods import class_agnostic
from ..sources.loaded import LoadedModel
from .entry import attribute
from .passes.raised import model_errors
from .record import Attribution, _device, _unwrap

GAP, CAPTION = 4, 16  # pixels between tiles, and of the caption strip over each


def detections(model: LoadedModel | nn.Module, x: torch.Tensor) -> list[Detection]:
    """The detector's answer to x, best first; a SpecError for a model that does not detect."""
    module, labels = _unwrap(model)
    with torch.no_grad(), model_errors("Each box"):  # a picture the detector cannot take: one line
        output = module(x.detach().to(_device(module)))
    if not is_detection_output(output):
        raise SpecError("Each box is for a detection model; this model answers with no boxes.")
    return detections_of(output, labels)


def each_box(model: LoadedModel | nn.Module, x: torch.Tensor, method: str, layer: str | None = None,
             options: dict | None = None, min_score: float | None = None, most: int = EACH_BOX_MOST,
             progress: Callable[[int, int], None] | None = None) -> list[Attribution]:
    """`method`'s map of each box shown (see boxes_to_explain), best first, each made by
    inspector.core.attribution.attribute with the target `box:K`. `progress(done, total)` after each box."""
    if method in class_agnostic():
        raise SpecError(f"{method} explains no box or class: its map is the same for every box.")
    if isinstance(most, bool) or not isinstance(most, int) or most < 1:
        raise SpecError(f"The boxes to explain are a whole number of at least 1, not {most!r}.")
    if min_score is not None and (isinstance(min_score, bool) or not isinstance(min_score, (int, float))
                                  or not 0 <= min_score <= 1):
        raise SpecError(f"The least score of a box to explain is a number from 0 to 1, not {min_score!r}.")
    found = detections(model, x)
    ranks = boxes_to_explain(found, min_score, most)
    if not ranks:
        threshold = default_min_score(found) if min_score is None else min_score
        raise SpecError(f"No detection scores {threshold:.2f} or more ({len(found)} found"
                        + (f", the best {found[0].score:.3f}" if found else "") + "): lower --min-score.")
    maps = []
    for done, rank in enumerate(ranks, 1):
        maps.append(attribute(model, x, method, f"box:{rank}", layer, options))
        if progress is not None:
            progress(done, len(ranks))
    return maps


def caption(found: Attribution) -> str:
    """"box:K name score" of the box a map explains."""
    box = found.detections[found.target_detection]
    return f"box:{found.target_detection} {box.name} {box.score:.2f}"


def tiled(picture: np.ndarray, maps: Sequence[Attribution], columns: int | None = None, scale: int = 1) -> np.ndarray:
    """One picture (H x W x 3 uint8) of each map over `picture` (the input as the model sees it), its box
    outlined and captioned above it, in a grid of `columns` (None: as square as it goes) on white. Every tile
    is the map's size times `scale` (each map pixel a block of scale x scale), its caption shortened with "…"
    where it is wider than the tile."""
    need_instance(picture, np.ndarray, "tiled(): picture", "an H x W x 3 uint8 array (the input as the model sees it)")
    if picture.ndim != 3 or picture.shape[2] != 3 or picture.dtype != np.uint8 or 0 in picture.shape:
        raise SpecError(f"tiled(): picture must be an H x W x 3 uint8 array (the input as the model sees it), "
                        f"not {picture.dtype} {picture.shape}.")
    maps = need_list(maps, "tiled(): maps", "each_box(...)'s maps")
    for found in maps:
        need_instance(found, Attribution, "tiled(): maps", "a list of Attributions (each_box's)")
    need_count(columns, "tiled(): columns", 1, none=True)
    picture_scale(picture.shape, need_count(scale, "tiled(): scale", 1))  # at most LONG_SIDE pixels a tile
    if not maps:
        raise SpecError("No maps to tile.")
    h, w = picture.shape[0] * scale, picture.shape[1] * scale
    cols = min(columns, len(maps)) if columns is not None else math.ceil(math.sqrt(len(maps)))
    rows = math.ceil(len(maps) / cols)
    sheet = Image.new("RGB", (cols * w + (cols - 1) * GAP, rows * (h + CAPTION) + (rows - 1) * GAP), "white")
    font = ImageFont.load_default(size=12)
    for i, found in enumerate(maps):
        left, top = (i % cols) * (w + GAP), (i // cols) * (h + CAPTION + GAP)
        tile = overlay(picture, found.map, sign=found.shown_sign)
        if found.detections is not None and found.target_detection is not None:
            tile = draw_detections(tile, found.detections, 2.0, found.target_detection, max(h, w))  # its box alone
            strip = Image.new("RGB", (w, CAPTION), "white")
            draw = ImageDraw.Draw(strip)
            draw.text((2, 1), fitted(caption(found), lambda t: text_width(draw, t, font) + 4, w), fill=(0, 0, 0),
                      font=font)
            sheet.paste(strip, (left, top))
        else:
            tile = enlarged(tile, scale)
        sheet.paste(Image.fromarray(tile, "RGB"), (left, top + CAPTION))
    return np.asarray(sheet)
