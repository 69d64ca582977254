"""The tutorial's toy model: a 3-4-1 MLP with fixed, hand-checkable weights."""

from __future__ import annotations

import torch
from torch import nn


class ToyMLP(nn.Module):
    """``fc1 -> relu1 -> fc2`` with fixed weights.

    On input ``[[1, 1, 1]]``: fc1 gives ``[[7, -13, 27, -29]]``, relu1 gives
    ``[[7, 0, 27, 0]]`` and fc2 gives ``[[89]]``.
    """

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(4, 1)
        with torch.no_grad():
            self.fc1.weight.copy_(torch.tensor(
                [[1.0, 2.0, 3.0], [-4.0, -5.0, -6.0], [7.0, 8.0, 9.0], [-10.0, -11.0, -12.0]]))
            self.fc1.bias.copy_(torch.tensor([1.0, 2.0, 3.0, 4.0]))
            self.fc2.weight.copy_(torch.tensor([[1.0, 2.0, 3.0, 4.0]]))
            self.fc2.bias.copy_(torch.tensor([1.0]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.relu1(self.fc1(x)))
