"""Tokens as maps: a transformer's (B, N, C) capture drawn as C maps of the model's patch grid.

The grid comes from the model, not from guessing per tensor (`inspector.core.sources.grids`).
N = prefix + H*W; the prefix tokens are kept apart (`prefix_tokens`). Torch-free (numpy), so the
window can use it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..common.errors import SpecError


@dataclass(frozen=True)
class TokenGrid:
    height: int
    width: int
    prefix: int = 0  # tokens before the patch tokens: class, distillation, registers
    levels: int = 1  # hierarchical models (transformers' Swin): the grid halves from stage to stage

    def sizes(self) -> list[tuple[int, int]]:
        """The grid of each stage: (height, width), then halved (rounded up, as patch merging pads)."""
        out, h, w = [], self.height, self.width
        for _ in range(max(self.levels, 1)):
            out.append((h, w))
            h, w = (h + 1) // 2, (w + 1) // 2
        return out

    def shape_of(self, tokens: int) -> tuple[int, int] | None:
        """The (height, width) a sequence of `tokens` patch tokens lies on (prefix left out), or None."""
        if tokens == self.prefix + self.height * self.width:
            return self.height, self.width
        return next(((h, w) for h, w in self.sizes() if h * w == tokens), None)

    def fits(self, tokens: int) -> bool:
        """Whether a sequence of `tokens` is this grid's patches (with or without the prefix, any stage)."""
        return self.shape_of(tokens) is not None

    def describe(self) -> str:
        extra = f" after {self.prefix} prefix token{'s' if self.prefix != 1 else ''}" if self.prefix else ""
        stages = f", halved at each of {self.levels - 1} later stages" if self.levels > 1 else ""
        return f"{self.height}x{self.width} patch grid{extra}{stages}"


def parse_grid(text: str) -> TokenGrid:
    """`HxW` or `HxW+P` (P prefix tokens), e.g. `14x14+1`; SpecError otherwise."""
    size, _, prefix = text.replace(" ", "").lower().partition("+")
    parts = size.split("x")
    if len(parts) != 2 or not all(p.isdigit() and int(p) > 0 for p in parts) or (prefix and not prefix.isdigit()):
        raise SpecError(f"Not a token grid: {text!r}. Write HxW or HxW+P, e.g. 14x14+1 for a ViT's 196 patches "
                        f"after its class token.")
    return TokenGrid(int(parts[0]), int(parts[1]), int(prefix or 0))


def token_maps(array: np.ndarray, grid: TokenGrid) -> np.ndarray | None:
    """Sample 0 of a (B, N, C) capture as (C, H, W) patch maps, or None when N is not the grid's."""
    a = np.asarray(array)
    size = grid.shape_of(a.shape[1]) if a.ndim == 3 else None
    if size is None:
        return None
    h, w = size
    patches = a[0, a.shape[1] - h * w:]
    return np.ascontiguousarray(patches.reshape(h, w, a.shape[2]).transpose(2, 0, 1))


def prefix_tokens(array: np.ndarray, grid: TokenGrid) -> np.ndarray | None:
    """Sample 0's prefix tokens (class, registers) of a (B, N, C) capture as (prefix, C), if it has them."""
    a = np.asarray(array)
    if a.ndim != 3 or not grid.prefix or a.shape[1] != grid.prefix + grid.height * grid.width:
        return None
    return a[0, :grid.prefix]


def is_channels_last(shape: tuple[int, ...], said: bool | None = None) -> bool:
    """(B, H, W, C) rather than (B, C, H, W), as the model `said` of the layer that gave it: its
    `LayerInfo.channels_last` (`inspector.core.sources.layers.channel_layouts`), which its own modules tell: a
    plain LayerNorm normalises, and a Linear multiplies, the last axis (Swin's and ConvNeXt's channels-last
    blocks); a convolution, BatchNorm or pooling reads axis 1; a Permute swaps them. Only where nothing
    is said (a bare array, or a layer no module of the model tells apart) a square map in dims 1-2 and
    another size last counts as channels-last, a guess that cannot see a non-square map."""
    if len(shape) != 4:
        return False
    if said is not None:
        return said
    return shape[1] == shape[2] != shape[3]


def attention_maps(array: np.ndarray, grid: TokenGrid | None, query: int = 0) -> np.ndarray:
    """Sample 0 of a (B, heads, N, N) attention capture as one map per head: what token `query`
    attends to, on the patch grid when N is the grid's (the prefix tokens left out); the whole
    N x N matrix per head otherwise (windowed attention, no grid)."""
    a = np.asarray(array)[0]
    heads, n = a.shape[0], a.shape[-1]
    if grid is not None and n == grid.prefix + grid.height * grid.width:
        q = min(max(query, 0), a.shape[1] - 1)
        return np.ascontiguousarray(a[:, q, grid.prefix:].reshape(heads, grid.height, grid.width))
    return a


def query_at(grid: TokenGrid, fy: float, fx: float) -> int:
    """The token of the patch at (fy, fx), fractions of the input's height and width."""
    row = min(int(fy * grid.height), grid.height - 1)
    col = min(int(fx * grid.width), grid.width - 1)
    return grid.prefix + row * grid.width + col
