"""The bundled demo CNN (:class:`DemoNet`) and a loader for its trained weights."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from inspector.demo.paths import demo_dir


class ResidualBlock(nn.Module):
    """ResNet-style basic block: conv-bn-relu-conv-bn, add identity, relu.

    Like torchvision's ``BasicBlock`` it owns a single ``relu`` module that is
    called twice per forward, and it adds the identity in place.
    """

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


class DemoNet(nn.Module):
    """Small CNN classifying 64x64 RGB images of shapes and textures."""

    def __init__(self, num_classes: int = 8, width: int = 16) -> None:
        super().__init__()
        w1, w2, w3 = width, 2 * width, 4 * width
        self.conv1 = nn.Conv2d(3, w1, 3, padding=1, bias=False)  # 64x64
        self.bn1 = nn.BatchNorm2d(w1)
        self.relu1 = nn.ReLU(inplace=True)
        self.pool1 = nn.MaxPool2d(2)  # -> 32x32
        self.conv2 = nn.Conv2d(w1, w2, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(w2)
        self.relu2 = nn.ReLU(inplace=True)
        self.pool2 = nn.MaxPool2d(2)  # -> 16x16
        self.block = ResidualBlock(w2)
        self.conv3 = nn.Conv2d(w2, w3, 3, stride=2, padding=1, bias=False)  # -> 8x8
        self.bn3 = nn.BatchNorm2d(w3)
        self.relu3 = nn.ReLU()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(w3, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool1(self.relu1(self.bn1(self.conv1(x))))
        x = self.pool2(self.relu2(self.bn2(self.conv2(x))))
        x = self.block(x)
        x = self.relu3(self.bn3(self.conv3(x)))
        return self.fc(self.flatten(self.pool(x)))


@dataclass(frozen=True)
class DemoBundle:
    """A ready-to-use demo model together with its preprocessing metadata."""

    model: DemoNet
    labels: list[str]
    mean: tuple[float, float, float]
    std: tuple[float, float, float]
    input_size: int = 64


def default_weights_path() -> Path:
    """Path of the shipped weights file."""
    return demo_dir() / "demo.safetensors"


def shuffled_weights_path() -> Path:
    """Path of the shipped weights of the demo's twin trained on shuffled labels (`train --shuffle-labels`)."""
    return demo_dir() / "demo-shuffled.safetensors"


def load_demo(weights_path: str | Path | None = None) -> DemoBundle:
    """Load the trained DemoNet (eval mode) and its ``demo.json`` metadata."""
    from safetensors.torch import load_file

    path = Path(weights_path) if weights_path is not None else default_weights_path()
    meta = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    labels = [str(c) for c in meta["classes"]]
    model = DemoNet(num_classes=len(labels), width=int(meta.get("width", 16)))
    model.load_state_dict(load_file(str(path)))
    model.eval()
    return DemoBundle(
        model=model,
        labels=labels,
        mean=tuple(float(v) for v in meta["mean"]),  # type: ignore[arg-type]
        std=tuple(float(v) for v in meta["std"]),  # type: ignore[arg-type]
        input_size=int(meta.get("input_size", 64)),
    )


def preprocess(images: np.ndarray, mean: Sequence[float], std: Sequence[float]) -> torch.Tensor:
    """Convert uint8 NxHxWx3 images into a normalised float32 NCHW tensor."""
    x = torch.tensor(np.asarray(images, dtype=np.uint8)).permute(0, 3, 1, 2).float().div_(255.0)
    m = torch.tensor(mean, dtype=torch.float32).view(1, 3, 1, 1)
    s = torch.tensor(std, dtype=torch.float32).view(1, 3, 1, 1)
    return (x - m) / s
