"""A tiny model whose layer `mix` is a known non-negative mixture: each 4 x 4 block of the picture is one
sample, its colour (R, G, B in [0, 1]) the coefficients of three planted directions in 8 channels. `signed` is
the same minus 0.5 (negative values: NMF refuses it); `tokens` is `mix` as a (batch, tokens, channels) sequence,
row by row (NLC)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from PIL import Image
from torch import nn

#: the planted directions (3 concepts x 8 channels), non-negative, unit rows
PLANTED = torch.tensor([[1.0, 0.8, 0.0, 0.0, 0.3, 0.0, 0.0, 0.2],
                        [0.0, 0.1, 1.0, 0.7, 0.0, 0.0, 0.4, 0.0],
                        [0.2, 0.0, 0.0, 0.3, 0.9, 1.0, 0.0, 0.0]])
PLANTED = PLANTED / PLANTED.norm(dim=1, keepdim=True)


class ToTokens(nn.Module):
    def forward(self, x):
        return x.flatten(2).transpose(1, 2)


class Planted(nn.Module):
    input_shape = (1, 3, 32, 32)

    def __init__(self) -> None:
        super().__init__()
        self.pool = nn.AvgPool2d(4)
        self.mix = nn.Conv2d(3, 8, 1, bias=False)
        self.signed = nn.Conv2d(8, 8, 1)
        self.head = nn.Linear(8, 2)
        self.tokens = ToTokens()
        with torch.no_grad():
            self.mix.weight.copy_(PLANTED.T[:, :, None, None])
            self.signed.weight.copy_(torch.eye(8)[:, :, None, None])
            self.signed.bias.fill_(-0.5)
            self.head.weight.copy_(torch.linspace(-1, 1, 16).reshape(2, 8))
            self.head.bias.zero_()

    def forward(self, x):
        mixed = self.mix(self.pool(x))
        return self.head(self.signed(mixed).mean((2, 3)) + self.tokens(mixed).mean(1))


def planted_images(folder: Path, count: int, seed: int = 0, on: float = 0.4) -> Path:
    """`count` 32 x 32 PNGs of 4 x 4 blocks, each channel on with probability `on` at a random level."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        levels = rng.uniform(0.2, 1.0, (8, 8, 3)) * (rng.random((8, 8, 3)) < on)
        pixels = np.kron(levels, np.ones((4, 4, 1)))
        Image.fromarray((pixels * 255).round().astype(np.uint8)).save(folder / f"img{i:03d}.png")
    return folder


def best_match_cosines(found: torch.Tensor, planted: torch.Tensor = PLANTED) -> list[float]:
    """For each planted direction, the cosine of the found direction that matches it best (one to one)."""
    from scipy.optimize import linear_sum_assignment

    f = found / found.norm(dim=1, keepdim=True).clamp_min(1e-12)
    cos = (planted @ f.T).numpy()
    rows, cols = linear_sum_assignment(-cos)
    return [float(cos[r, c]) for r, c in zip(rows, cols)]
