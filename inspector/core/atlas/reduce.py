"""One batch through the model with forward hooks that reduce each selected layer on its device.

For every channel of a layer, an image's score is the channel's maximum over positions (the
feature map's H x W, or a transformer's patch tokens on the model's token grid; a (B, C) output
has one position). The hook keeps only what the atlas needs: the scores, and the argmax position
of the (image, channel) pairs that can still enter the top K (those reaching the channel's K-th
best score so far; off the CPU every pair's, those picked on the host), plus per-channel sums for the
statistics. No backward, no copies of the
activations. Hooks are registered on entry and all removed on exit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ..common.errors import SpecError
from ..common.hooks import together
from ..folder_jobs import LayerPartial, Layout, layer_tensor, layout_of
from ..sources.layers import channel_layouts
from ..records.tokens import TokenGrid


@dataclass
class Reduced:
    """A layer's reductions for one batch, still on the model's device."""

    scores: torch.Tensor  # (B, C)
    total: torch.Tensor  # (B, C) sums over positions
    squares: torch.Tensor  # (B, C)
    positive: torch.Tensor  # (B, C)
    candidates: torch.Tensor | None  # (n, 2) [b, c] that reach the threshold (None: picked on the host)
    argmax: torch.Tensor  # (n,) flat position of their maximum ((B, C), every one, where picked on the host)
    positions: int
    reaches: torch.Tensor | None = None  # (B, C) bool: which reach the threshold, where picked on the host


def reduce_layer(v: torch.Tensor, threshold: torch.Tensor, inclusive: bool,
                 scratch: torch.Tensor | None = None, on_host: bool | None = None) -> Reduced:
    """Scores, argmax (of the candidates; of every pair where they are picked on the host) and sums of a
    (B, C, P) view. `scratch`: a float32
    buffer of at least v's size on its device, reused between calls (a fresh tensor this large costs
    page faults every batch). `on_host` (default: off the CPU) leaves the candidates to `to_partial`: which
    reach the threshold is known only by reading it back, and that would stop a GPU at every layer's hook."""
    scores = v.amax(2)
    mask = scores >= threshold if inclusive else scores > threshold
    if on_host is None:
        on_host = v.device.type != "cpu"
    if on_host:
        argmax = v.argmax(2)  # every channel's: cheap on a GPU, and no wait
        candidates = None
    else:
        candidates, mask = mask.nonzero(), None
        if candidates.shape[0] * 2 > scores.numel():
            argmax = v.argmax(2)[candidates[:, 0], candidates[:, 1]]
        else:
            argmax = v[candidates[:, 0], candidates[:, 1]].argmax(-1)
    if scratch is None or scratch.numel() < v.numel():
        scratch = torch.empty(v.numel(), dtype=v.dtype, device=v.device)
    work = scratch[:v.numel()].view(v.shape)
    # squares and positives written into the buffer, then summed: on the CPU ~2x faster than
    # linalg.vecdot and clamp().sign_().sum() (a bool sum goes through int64); counts in float32 are
    # exact below 2**24 positions, and NaN is not positive
    squares = torch.mul(v, v, out=work).sum(2)
    positive = torch.gt(v, 0, out=work).sum(2)
    return Reduced(scores, v.sum(2), squares, positive, candidates, argmax, v.shape[2], mask)


class AtlasPass:
    """Forward passes with the atlas's hooks on `layers` (paths of `module`)."""

    def __init__(self, module: nn.Module, layers: list[str], grid: TokenGrid | None) -> None:
        self.module, self.layers, self.grid = module, list(layers), grid
        self.layouts: dict[str, Layout] = {}
        self._said: dict[str, bool] | None = None  # the model's channels-last word per layer (first run)
        named = dict(module.named_modules())
        self._modules = [(path, named[path]) for path in self.layers]
        self._scratch: torch.Tensor | None = None  # reduce_layer's buffer, as large as the largest output

    def run(self, x: torch.Tensor, thresholds: dict[str, torch.Tensor] | None = None,
            inclusive: bool = False) -> dict[str, Reduced]:
        """One forward (no grad) of `x`; the reductions of every layer's first call."""
        found: dict[str, Reduced] = {}
        if self._said is None:  # kept from the model's layer tree (one no-grad run of one image where none was)
            self._said = channel_layouts(self.module, x[:1])

        def hook_for(path: str):
            def hook(_module, _args, output):
                if path in found:
                    return  # a shared module's later calls
                output = layer_tensor(output, path, "the atlas needs its activations")
                layout = self.layouts.get(path)
                if layout is None:
                    layout = self.layouts[path] = layout_of(path, tuple(output.shape), self.grid,
                                                            self._said.get(path))
                v = layout.positions(output.detach())
                if v.dtype != torch.float32:
                    v = v.float()
                thr = thresholds.get(path) if thresholds else None
                if thr is None:
                    thr = torch.full((layout.channels,), -torch.inf, device=v.device)
                if self._scratch is None or self._scratch.numel() < v.numel() or self._scratch.device != v.device:
                    self._scratch = torch.empty(v.numel(), dtype=torch.float32, device=v.device)
                found[path] = reduce_layer(v, thr, inclusive, self._scratch)
            return hook

        with together(module.register_forward_hook(hook_for(path)) for path, module in self._modules), \
                torch.inference_mode():
            self.module(x)
        missing = [p for p in self.layers if p not in found]
        if missing:
            raise SpecError(f"Layer{'s' if len(missing) > 1 else ''} {', '.join(missing)} never ran in the "
                            f"model's forward; the atlas has nothing to rank there.")
        return found


def to_partial(reduced: Reduced, images: np.ndarray) -> LayerPartial:
    """Bring a layer's reductions to the host as the batch's contribution (`images`: dataset indices)."""
    c = reduced.scores.shape[1]
    packed = torch.stack([reduced.total, reduced.squares, reduced.positive, reduced.scores]).cpu().numpy()
    scores = packed[3]
    if reduced.candidates is None:  # picked here, from every channel's argmax
        cand = np.argwhere(reduced.reaches.cpu().numpy())
        argmax = reduced.argmax.cpu().numpy()[cand[:, 0], cand[:, 1]]
    else:
        cand, argmax = reduced.candidates.cpu().numpy(), reduced.argmax.cpu().numpy()
    b, ch = cand[:, 0], cand[:, 1]
    count = np.full(c, float(reduced.positions * len(images)))
    return LayerPartial.from_sums(
        ch, images[b], scores[b, ch], argmax, count,
        packed[0].astype(np.float64).sum(0), packed[1].astype(np.float64).sum(0),
        packed[2].astype(np.int64).sum(0))
