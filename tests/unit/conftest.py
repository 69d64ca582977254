"""Shared fixtures for the engine tests (no Qt here)."""

from __future__ import annotations

import pytest
import torch

from inspector.core import load_model

TOY_SOURCE = "inspector.demo.toy:ToyMLP"


@pytest.fixture
def toy():
    """The hooks tutorial's fc1 -> relu1 -> fc2 model (fixed weights), loaded as a user would."""
    return load_model(TOY_SOURCE)


@pytest.fixture
def ones() -> torch.Tensor:
    """The tutorial's input [[1, 1, 1]]."""
    return torch.tensor([[1.0, 1.0, 1.0]])

