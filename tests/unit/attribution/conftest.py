"""A small conv net for the attribution methods' tests (two convs, ReLU and GELU, pooled, 4 classes)."""

from __future__ import annotations

import pytest
import torch
from torch import nn


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.body = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(), nn.Conv2d(6, 6, 3, padding=1), nn.GELU(),
                                  nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 4))

    def forward(self, x):
        return self.body(x)


@pytest.fixture
def small_net() -> nn.Module:
    return Small().eval()
