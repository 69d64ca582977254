"""How a layer's output holds channels and positions: what a folder job reduces or samples per position."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..common.errors import SpecError
from ..records.tokens import TokenGrid, is_channels_last


@dataclass(frozen=True)
class Layout:
    """How a layer's output holds channels and positions."""

    kind: str  # "nchw", "nhwc" (channels-last blocks), "tokens" (on a patch grid), "sequence", "vector"
    channels: int
    height: int
    width: int
    prefix: int = 0  # tokens before the patches (class, registers): not positions in the picture

    def positions(self, output: torch.Tensor) -> torch.Tensor:
        """The output as a (B, C, P) view: P positions, row-major over (height, width)."""
        b = output.shape[0]
        if self.kind == "nchw":
            return output.reshape(b, self.channels, -1)
        if self.kind == "vector":
            return output.reshape(b, self.channels, 1)
        if self.kind == "nhwc":
            return output.reshape(b, -1, self.channels).transpose(1, 2)
        return output[:, self.prefix:].transpose(1, 2)  # tokens, sequence


def layout_of(path: str, shape: tuple[int, ...], grid: TokenGrid | None, channels_last: bool | None = None) -> Layout:
    """The layout of an output of `shape` (batch first), or SpecError when it has no channels. A 4-D output is
    (B, H, W, C) where the model says `channels_last` of the layer (`is_channels_last`)."""
    if len(shape) == 4:
        if is_channels_last(shape, channels_last):
            return Layout("nhwc", shape[3], shape[1], shape[2])
        return Layout("nchw", shape[1], shape[2], shape[3])
    if len(shape) == 3:
        if grid is not None and grid.fits(shape[1]):
            return Layout("tokens", shape[2], grid.height, grid.width, shape[1] - grid.height * grid.width)
        return Layout("sequence", shape[2], 1, shape[1])
    if len(shape) == 2:
        return Layout("vector", shape[1], 1, 1)
    raise SpecError(f"Layer {path} gives an output of shape {tuple(shape)}; the atlas needs (batch, channels), "
                    f"(batch, channels, H, W) or (batch, tokens, channels).")


def layer_tensor(output, path: str, needs: str) -> torch.Tensor:
    """A layer's output as the tensor a folder job reads (the first tensor of a tuple or list); SpecError, in one
    line ending with `needs` ("the atlas needs its activations"), when it is not a floating-point tensor."""
    if isinstance(output, (tuple, list)):
        output = next((o for o in output if isinstance(o, torch.Tensor)), None)
    if not isinstance(output, torch.Tensor) or not output.is_floating_point():
        raise SpecError(f"Layer {path} does not return a floating-point tensor; {needs}.")
    return output
