"""Channels tiled into one image: what a panel draws for a capture (numpy only)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Mosaic:
    image: np.ndarray  # (H, W) float32, C-contiguous, NaN between tiles
    rows: int
    cols: int
    tile_h: int
    tile_w: int
    channels: int
    gap: int = 1

    def channel_at(self, row: float, col: float) -> tuple[int, int, int] | None:
        """(channel, y, x) under image pixel (row, col), or None on a gap or outside."""
        r, c = int(row), int(col)
        if r < 0 or c < 0:
            return None
        tr, y = divmod(r, self.tile_h + self.gap)
        tc, x = divmod(c, self.tile_w + self.gap)
        if y >= self.tile_h or x >= self.tile_w or tr >= self.rows or tc >= self.cols:
            return None
        channel = tr * self.cols + tc
        return (channel, y, x) if channel < self.channels else None


def as_maps(array: np.ndarray) -> np.ndarray:
    """A capture as (C, H, W) maps: conv maps per channel; (N, F) vectors as one row; tokens as one map."""
    a = np.asarray(array)
    if a.ndim >= 4:
        return a[0].reshape(a.shape[1], a.shape[2], -1)
    if a.ndim == 3:  # (N, T, D) tokens x features: one image
        return a[0][None]
    if a.ndim == 2:
        return a[0][None, None, :]
    return a.reshape(1, 1, -1)


def make_mosaic(array: np.ndarray, max_channels: int = 1024, gap: int = 1) -> Mosaic:
    """Tile up to `max_channels` maps into a near-square grid, in one image."""
    maps = as_maps(array)[:max_channels].astype(np.float32, copy=False)
    c, h, w = maps.shape
    cols = max(1, math.ceil(math.sqrt(c * h / max(w, 1)))) if c > 1 else 1
    cols = min(cols, c)
    rows = math.ceil(c / cols)
    out = np.full((rows * (h + gap) - gap, cols * (w + gap) - gap), np.nan, dtype=np.float32)
    padded = np.full((rows * cols, h, w), np.nan, dtype=np.float32)
    padded[:c] = maps
    grid = padded.reshape(rows, cols, h, w)
    if gap == 0:
        out[:] = grid.transpose(0, 2, 1, 3).reshape(rows * h, cols * w)
    else:
        for r in range(rows):
            band = out[r * (h + gap): r * (h + gap) + h]
            for col in range(cols):
                band[:, col * (w + gap): col * (w + gap) + w] = grid[r, col]
    return Mosaic(np.ascontiguousarray(out), rows, cols, h, w, c, gap)


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
    lo, hi = float(np.percentile(finite, 0.5)), float(np.percentile(finite, 99.5))
    if hi <= lo:
        lo, hi = float(finite.min()), float(finite.max())
        if hi <= lo:
            hi = lo + 1.0
    return lo, hi
