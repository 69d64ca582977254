"""A classifier head whose weights are all zero, as torchvision's ViT and some timm heads start (to be trained):
every gradient upstream of it is exactly 0. The run's warning says so, the app says it once a model loads."""

from __future__ import annotations

import torch
from torch import nn


def zero_head_warning(model: nn.Module) -> str | None:
    """What a run with a backward says of a model whose head's weights are all zero (`zero_head`), else None."""
    head = zero_head(model)
    if head is None:
        return None
    return (f"Every gradient before {head} is exactly 0: its weights are all zero (torchvision and timm start some "
            f"classifier heads so, to be trained), so nothing flows back from the output. Load pretrained weights "
            f"or a checkpoint to see gradients.")


def zero_head(model: nn.Module) -> str | None:
    """The model's last Linear (its classifier head) when its weights are all zero, as torchvision's ViT
    and some timm heads are initialised: every gradient upstream of it is then 0. None otherwise."""
    last = None
    for path, module in model.named_modules():
        if isinstance(module, nn.Linear):
            last = (path, module)
    if last is None or last[1].weight.numel() == 0:
        return None
    with torch.no_grad():
        return last[0] or "the head" if not bool(last[1].weight.any()) else None
