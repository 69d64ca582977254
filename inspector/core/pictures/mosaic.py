"""Channels tiled into one image: what a panel draws for a capture (numpy only).

Activations and module gradients are (N, C, H, W): sample 0's C maps are tiled ((N, H, W, C)
channels-last blocks and a transformer's (N, tokens, C) on its patch grid too). A parameter
gradient (`conv1.weight:grad`, out x in x kh x kw) shows every filter: each filter is one tile
holding its `in` kernels (themselves tiled), and the filters are tiled like channels. Many
channels are shown a page (`PAGE` channels) at a time; hit-testing reports the true channel.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..common.errors import SpecError
from ..common.keys import parse_key
from ..records.tokens import TokenGrid, attention_maps, is_channels_last, token_maps

PAGE = 256  # channels (or filters) in one mosaic


class _Tiles:
    """Geometry of `channels` tiles of tile_h x tile_w in a rows x cols grid, `gap` pixels apart;
    the first tile is channel `first`."""

    rows: int
    cols: int
    tile_h: int
    tile_w: int
    channels: int
    gap: int
    first: int

    def channel_at(self, row: float, col: float) -> tuple[int, int, int] | None:
        """(channel, y, x) under image pixel (row, col), or None on a gap or outside."""
        r, c = math.floor(row), math.floor(col)
        if r < 0 or c < 0:
            return None
        tr, y = divmod(r, self.tile_h + self.gap)
        tc, x = divmod(c, self.tile_w + self.gap)
        if y >= self.tile_h or x >= self.tile_w or tr >= self.rows or tc >= self.cols:
            return None
        local = tr * self.cols + tc
        return (self.first + local, y, x) if local < self.channels else None

    def origin(self, channel: int) -> tuple[int, int]:
        """Image (row, col) of the top-left pixel of `channel`'s tile."""
        tr, tc = divmod(channel - self.first, self.cols)
        return tr * (self.tile_h + self.gap), tc * (self.tile_w + self.gap)

    def contains(self, channel: int) -> bool:
        return self.first <= channel < self.first + self.channels


@dataclass(frozen=True)
class Grid(_Tiles):
    rows: int
    cols: int
    tile_h: int
    tile_w: int
    channels: int
    gap: int = 1
    first: int = 0


@dataclass(frozen=True)
class Mosaic(_Tiles):
    image: np.ndarray  # (H, W) float32, C-contiguous, NaN between tiles
    rows: int
    cols: int
    tile_h: int
    tile_w: int
    channels: int  # tiles in this mosaic (one page)
    gap: int = 1
    first: int = 0  # channel of the first tile
    total: int = 0  # channels of the capture (all pages)
    kernels: Grid | None = None  # weights: how one filter's input kernels are tiled in its tile

    def kernel_at(self, row: float, col: float) -> tuple[int, int, int, int] | None:
        """Weights: (filter, input channel, ky, kx) under image pixel (row, col), or None."""
        hit = self.channel_at(row, col)
        if hit is None or self.kernels is None:
            return None
        inner = self.kernels.channel_at(hit[1], hit[2])
        return None if inner is None else (hit[0], *inner)


def grid_cols(count: int, h: int, w: int) -> int:
    """Columns of a near-square grid of `count` tiles of h x w."""
    if count <= 1:
        return 1
    return min(count, max(1, math.ceil(math.sqrt(count * h / max(w, 1)))))


def tile(maps: np.ndarray, cols: int, gap: int = 1) -> np.ndarray:
    """(..., N, h, w) maps -> (..., rows*(h+gap)-gap, cols*(w+gap)-gap) float32, NaN in gaps."""
    *lead, n, h, w = maps.shape
    rows = max(1, math.ceil(n / cols))
    full = np.full((*lead, rows, h + gap, cols, w + gap), np.nan, dtype=np.float32)
    whole, rest = divmod(n, cols)
    grid = maps[..., : whole * cols, :, :].reshape(*lead, whole, cols, h, w)
    full[..., :whole, :h, :, :w] = np.swapaxes(grid, -2, -3)
    if rest:
        full[..., whole, :h, :rest, :w] = np.swapaxes(maps[..., whole * cols:, :, :], -2, -3)
    image = full.reshape(*lead, rows * (h + gap), cols * (w + gap))
    return np.ascontiguousarray(image[..., : rows * (h + gap) - gap, : cols * (w + gap) - gap])


def as_maps(array: np.ndarray, channels_last: bool | None = None) -> np.ndarray:
    """A capture as (C, H, W) maps: conv maps per channel (channels-last ones too, where the model says
    `channels_last` of the layer: `is_channels_last`); (N, F) vectors as one row; tokens (without a grid,
    see `capture_maps`) as one map."""
    a = np.asarray(array)
    if is_channels_last(a.shape, channels_last):
        return a[0].transpose(2, 0, 1)
    if a.ndim >= 4:
        return a[0].reshape(a.shape[1], a.shape[2], -1)
    if a.ndim == 3:  # (N, T, D) tokens x features: one image
        return a[0][None]
    if a.ndim == 2:
        return a[0][None, None, :]
    return a.reshape(1, 1, -1)


def is_attention(key: str) -> bool:
    """An attention capture (`blocks.0.attn:attention`, at any call): one map per head."""
    try:
        return parse_key(key).site == "attention"
    except SpecError:
        return False


def is_parameter(key: str) -> bool:
    """A parameter's gradient (`fc1.weight:grad`), not the model's `input:grad`."""
    try:
        parsed = parse_key(key)
    except SpecError:
        return False
    return parsed.site == "grad" and parsed.layer != ""


def weight_maps(array: np.ndarray) -> tuple[np.ndarray, Grid]:
    """(out, in, kh, kw) weights (also (out, in, k) and (out, in, d, h, w)) -> one map per filter,
    (out, Hf, Wf), with the filter's `in` kernels tiled in it, and that inner tiling. Up to 4
    input channels lie in a row, more in a near-square grid; 1x1 kernels have no gaps."""
    a = np.asarray(array, dtype=np.float32)
    out = a.shape[0]
    # conv1d: (out, in, 1, k); conv3d: each depth slice is one kernel
    kernels = a[:, :, None, :] if a.ndim == 3 else a.reshape(out, -1, a.shape[-2], a.shape[-1])
    n, kh, kw = kernels.shape[1:]
    cols = n if n <= 4 else grid_cols(n, kh, kw)
    gap = 0 if kh * kw == 1 else 1
    inner = Grid(math.ceil(n / cols), cols, kh, kw, n, gap)
    return tile(kernels, cols, gap), inner


def _said(key: str, layouts: Mapping[str, bool] | None) -> bool | None:
    """What the model says of the layout of the layer a capture `key` is of (None: nothing)."""
    if not layouts:
        return None
    try:
        return layouts.get(parse_key(key).layer)
    except SpecError:
        return None


def capture_maps(key: str, array: np.ndarray, tokens: TokenGrid | None = None,
                 query: int = 0, layouts: Mapping[str, bool] | None = None) -> tuple[np.ndarray, Grid | None]:
    """What a capture tiles: (maps, kernel grid for weights or None). With the model's token grid,
    a (B, N, C) sequence that fits it is C maps of the grid, and an `attention` capture one map per
    head of what token `query` attends to (see inspector.core.records.tokens). `layouts`: the model's
    channels-last word per layer (`LayerTree.layouts()`), for 4-D captures."""
    a = np.asarray(array)
    if is_attention(key) and a.ndim == 4:
        return attention_maps(a, tokens, query), None
    if is_parameter(key) and a.ndim >= 3:
        return weight_maps(a)
    if is_parameter(key) and a.ndim == 2:  # Linear weights: one out x in image
        return a[None].astype(np.float32, copy=False), None
    if tokens is not None and (maps := token_maps(a, tokens)) is not None:
        return maps, None
    return as_maps(a, _said(key, layouts)), None


def separator(h: int, w: int) -> int:
    """Pixels between tiles of h x w: a sixteenth of the tile's side (at least 1), so that the lines
    between tiles stay on screen when a mosaic of large tiles is drawn smaller than it is (16 maps of
    112 x 112 in a 220-pixel panel: a 1-pixel gap becomes half a screen pixel, and some vanish)."""
    return max(1, round(max(h, w) / 16))


def mosaic_of(maps: np.ndarray, first: int = 0, count: int = PAGE, gap: int | None = None,
              kernels: Grid | None = None) -> Mosaic:
    """Tile maps[first:first+count] into a near-square grid, in one image (`gap`: `separator` unless given)."""
    page = maps[first: first + count].astype(np.float32, copy=False)
    c, h, w = page.shape
    if gap is None:
        gap = max(2, separator(h, w)) if kernels is not None and kernels.gap else separator(h, w)
    cols = grid_cols(c, h, w)
    image = tile(page, cols, gap)
    return Mosaic(image, math.ceil(c / cols), cols, h, w, c, gap, first, len(maps), kernels)


def make_mosaic(array: np.ndarray, max_channels: int = PAGE, gap: int | None = None, first: int = 0,
                key: str = "", tokens: TokenGrid | None = None, layouts: Mapping[str, bool] | None = None) -> Mosaic:
    """The mosaic of a capture's channels first..first+max_channels (weights when `key` is a
    parameter gradient; token sequences on the model's patch grid `tokens`; channels-last maps where the
    model's `layouts` say so)."""
    maps, kernels = capture_maps(key, array, tokens, layouts=layouts)
    return mosaic_of(maps, first, max_channels, None if kernels is not None else gap, kernels)


def levels(array: np.ndarray, diverging: bool) -> tuple[float, float]:
    """Colour levels: symmetric around zero for gradients, robust min/max for activations."""
    flat = np.asarray(array).reshape(-1)
    if flat.size > 65536:  # a strided sample is enough for robust levels and keeps this ~1 ms
        flat = flat[:: flat.size // 65536]
    finite = flat[np.isfinite(flat)]
    if finite.size == 0:
        return (-1.0, 1.0) if diverging else (0.0, 1.0)
    if diverging:
        bound = float(np.percentile(np.abs(finite), 99.5)) or float(np.abs(finite).max()) or 1.0
        return -bound, bound
    lo, hi = (float(v) for v in np.percentile(finite, [0.5, 99.5]))  # one call: ~3x faster than two
    if hi <= lo:
        lo, hi = float(finite.min()), float(finite.max())
        if hi <= lo:
            hi = lo + 1.0
    return lo, hi
