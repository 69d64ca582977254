"""A vision transformer as LeGrad and Chefer's relevance see it: its blocks (the residual stream between them),
each block's attention module, an attention pool after the last one (timm's MAP head, SigLIP's), the patch
grid, and the one-line refusals for every other model. Also what both do with a map of the keys: the patches'
part of it on the grid."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ..attention.supported import supported_text
from ..attention.taps import is_latent_pool, tappable
from ..common.errors import SpecError
from ..records.tokens import TokenGrid
from ..sources.grids import token_grid


@dataclass(frozen=True)
class VitBlocks:
    """`blocks` in forward order, `attention[i]` the attention module of `blocks[i]`, `pool` the attention pool
    the head reads the last block's tokens through (None: the head reads the tokens themselves)."""

    grid: TokenGrid
    blocks: tuple[str, ...]
    attention: tuple[str, ...]
    pool: str | None = None


def find_grid(module: nn.Module, input_hw: tuple[int, int]) -> TokenGrid | None:
    """The model's patch grid, or the first submodule's that has one (a classifier wrapped around a tower)."""
    return next((g for g in (token_grid(m, input_hw) for m in module.modules()) if g is not None), None)


def _block_of(path: str, modules: dict[str, nn.Module]) -> str | None:
    """The nearest module above `path` that is an item of a ModuleList or Sequential (a block), or None."""
    parts = path.split(".")
    for end in range(len(parts) - 1, 0, -1):
        if isinstance(modules[".".join(parts[:end - 1])], (nn.ModuleList, nn.Sequential)):
            return ".".join(parts[:end])
    return None


def find_blocks(module: nn.Module, input_hw: tuple[int, int], method: str) -> VitBlocks:
    """The blocks of a vision transformer; a SpecError saying why for any other model."""
    grid = find_grid(module, input_hw)
    if grid is None or grid.levels > 1:
        raise SpecError(f"{method} explains vision transformers (torchvision, timm and transformers ViT-family: "
                        f"one patch grid, attention in every block); this model has "
                        f"{'no patch grid' if grid is None else 'a hierarchy of grids (Swin)'}. Use saliency, "
                        f"Grad-CAM or integrated gradients.")
    modules = dict(module.named_modules())
    found = [p for p, m in modules.items() if p and tappable(m)]
    if not found:
        raise SpecError(f"{method} needs attention modules ({supported_text()}); this model has none it knows.")
    blocks = {p: _block_of(p, modules) for p in found if not is_latent_pool(modules[p])}
    inside = {p: b for p, b in blocks.items() if b is not None}
    pools = [p for p in found if p not in inside]
    parents = {b.rpartition(".")[0] for b in inside.values()}
    if not inside or len(parents) > 1:
        raise SpecError(f"{method} needs one list of transformer blocks with an attention module each; this model "
                        f"has its attention in {len(parents)} lists.")
    if len(set(inside.values())) < len(inside):
        raise SpecError(f"{method} needs one attention module per block; a block of this model has more.")
    if len(pools) > 1:
        raise SpecError(f"{method}: this model has {len(pools)} attention modules after its blocks "
                        f"({', '.join(pools)}); it reads one attention pool at most.")
    rank = {p: i for i, p in enumerate(modules)}  # registration order: the order a ViT's blocks run in
    paths = sorted(inside, key=rank.__getitem__)
    return VitBlocks(grid, tuple(inside[p] for p in paths), tuple(paths), pools[0] if pools else None)


def patch_part(keys: torch.Tensor, grid: TokenGrid, method: str) -> torch.Tensor:
    """The patches' part of a (..., S) map over the keys, as (..., H, W): the prefix tokens (class, distillation,
    registers) left out, or none when the keys are the patches alone (a pool over patch tokens)."""
    count = grid.height * grid.width
    if keys.shape[-1] == grid.prefix + count:
        keys = keys[..., grid.prefix:]
    elif keys.shape[-1] != count:
        raise SpecError(f"{method}: the attention has {keys.shape[-1]} keys, not the {grid.describe()} "
                        f"(windowed attention?).")
    return keys.reshape(*keys.shape[:-1], grid.height, grid.width)
