"""The patch grid a model's token sequences follow, read from the model itself: timm's
`patch_embed.grid_size` and `num_prefix_tokens` (class, distillation and register tokens),
torchvision's VisionTransformer `image_size // patch_size` with its class token, a transformers
model's config (`hf_models.token_grid`, where the grid follows the input's size)."""

from __future__ import annotations

from ..records.tokens import TokenGrid
from .hf_models import token_grid as hf_grid
from .image_text import ImageText


def token_grid(module, input_hw: tuple[int, int] | None = None) -> TokenGrid | None:
    """The patch grid a model's token sequences follow, when the model says (None otherwise).
    `input_hw`: the input's height and width, for models whose grid follows it (transformers)."""
    if type(module).__module__.startswith("transformers.") or isinstance(module, ImageText):
        return hf_grid(module, input_hw)
    embed = getattr(module, "patch_embed", None)
    size = getattr(embed, "grid_size", None)
    if size is not None and len(size) == 2:  # timm ViT, DeiT, EVA, BEiT, ...
        prefix = int(getattr(module, "num_prefix_tokens", 0) or 0)
        return TokenGrid(int(size[0]), int(size[1]), prefix)
    image, patch = getattr(module, "image_size", None), getattr(module, "patch_size", None)
    if isinstance(image, int) and isinstance(patch, int) and hasattr(module, "class_token"):  # torchvision ViT
        side = image // patch
        return TokenGrid(side, side, 1)
    return None
