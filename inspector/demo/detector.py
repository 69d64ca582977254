"""The bundled demo object detector: torchvision's FCOS over a small CNN with an FPN.

FCOS is anchor-free (one point per feature-map cell predicts a class, a box and a
"centre-ness"), so it needs no anchor-shape tuning, trains quickly from scratch
and its score ``sqrt(sigmoid(class) * sigmoid(centre-ness))`` is differentiable
down to the input pixels, which is what the inspector's attribution wants.
Objects in the demo scenes (:mod:`inspector.demo.scenes`) are about 15 to 140
pixels, so one feature level at stride 8 (with stride-16 and stride-32 context
added through the FPN) covers them all.

In eval mode ``model([chw, ...])`` or ``model(nchw)``, with floats in [0, 1] of
any size, returns ``[{"boxes", "labels", "scores"}]`` in input pixels; the model
resizes (shorter side to 160) and normalises internally.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn
from torchvision.models.detection import FCOS
from torchvision.models.detection.anchor_utils import AnchorGenerator
from torchvision.models.detection.fcos import FCOSHead
from torchvision.ops import nms

from inspector.demo.model import ResidualBlock
from inspector.demo.paths import demo_dir
from inspector.demo.shapes import CLASSES

LABELS: tuple[str, ...] = CLASSES  # FCOS has no background class: label i is CLASSES[i]
INPUT_SIZE = (160, 160)  # (h, w) the model resizes a square input to
MEAN, STD = (0.5, 0.5, 0.5), (0.29, 0.29, 0.29)  # of the generated scenes, roughly
SCORE_THRESHOLD = 0.4  # for showing detections; the model itself keeps all above 0.05
FEATURES = 64  # channels of the FPN output and the FCOS head


def _conv_bn_relu(c_in: int, c_out: int, stride: int = 1) -> list[nn.Module]:
    """3x3 convolution, batch norm, ReLU."""
    return [nn.Conv2d(c_in, c_out, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(c_out),
            nn.ReLU(inplace=True)]


class DetectorBackbone(nn.Module):
    """Five stages halving the resolution (16-32-64-96-128 channels) and a top-down FPN giving one stride-8 map.

    The first three stages convolve at full resolution and then max-pool rather than
    convolve with stride 2: strided convolutions alias fine textures, and with them
    the detector could not tell stripes from a checkerboard.
    """

    out_channels = FEATURES  # FCOS reads this

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(*_conv_bn_relu(3, 16), nn.MaxPool2d(2))  # /2
        self.stage1 = nn.Sequential(*_conv_bn_relu(16, 32), nn.MaxPool2d(2))  # /4
        self.stage2 = nn.Sequential(*_conv_bn_relu(32, 64), nn.MaxPool2d(2), ResidualBlock(64))  # /8
        self.stage3 = nn.Sequential(*_conv_bn_relu(64, 96, stride=2), ResidualBlock(96))  # /16
        self.stage4 = nn.Sequential(*_conv_bn_relu(96, 128, stride=2), ResidualBlock(128))  # /32
        self.lateral3 = nn.Conv2d(64, FEATURES, 1)
        self.lateral4 = nn.Conv2d(96, FEATURES, 1)
        self.lateral5 = nn.Conv2d(128, FEATURES, 1)
        self.smooth = nn.Conv2d(FEATURES, FEATURES, 3, padding=1)

    def forward(self, x: torch.Tensor) -> OrderedDict[str, torch.Tensor]:
        c3 = self.stage2(self.stage1(self.stem(x)))
        c4 = self.stage3(c3)
        c5 = self.stage4(c4)
        p4 = self.lateral4(c4) + F.interpolate(self.lateral5(c5), size=c4.shape[-2:], mode="nearest")
        p3 = self.lateral3(c3) + F.interpolate(p4, size=c3.shape[-2:], mode="nearest")
        return OrderedDict(p3=self.smooth(p3))


class ShapeFCOS(FCOS):
    """FCOS whose non-maximum suppression ignores the class: one shape gets one box.

    torchvision suppresses overlapping boxes per class only, so a shape could also
    come back, at a lower score, as each class it resembles (a square as a circle).
    Shapes in the scenes overlap only partly, so their boxes rarely overlap enough
    to suppress each other.
    """

    def postprocess_detections(self, head_outputs: dict[str, list[torch.Tensor]],
                               anchors: list[list[torch.Tensor]],
                               image_shapes: list[tuple[int, int]]) -> list[dict[str, torch.Tensor]]:
        detections = super().postprocess_detections(head_outputs, anchors, image_shapes)
        kept = [nms(d["boxes"], d["scores"], self.nms_thresh) for d in detections]
        return [{k: v[keep] for k, v in d.items()} for d, keep in zip(detections, kept)]


def build_detector() -> ShapeFCOS:
    """The untrained detector (deterministic under ``torch.manual_seed``; downloads nothing)."""
    anchors = AnchorGenerator(sizes=((8,),), aspect_ratios=((1.0,),))  # one point per stride-8 cell
    head = FCOSHead(FEATURES, num_anchors=1, num_classes=len(LABELS), num_convs=2)
    return ShapeFCOS(DetectorBackbone(), num_classes=len(LABELS),
                     min_size=INPUT_SIZE[0], max_size=192,  # a long side of at most 192 after resizing
                     image_mean=list(MEAN), image_std=list(STD), anchor_generator=anchors, head=head,
                     score_thresh=0.05, nms_thresh=0.5, detections_per_img=50, topk_candidates=200)


@dataclass(frozen=True)
class DemoDetector:
    """The trained detector (eval mode) with what a caller needs to use and show it."""

    model: ShapeFCOS
    labels: tuple[str, ...]
    input_size: tuple[int, int]  # (h, w) of the default input
    score_threshold: float  # detections below it are not worth showing


def default_detector_path() -> Path:
    """Path of the shipped detector weights."""
    return demo_dir() / "detector.safetensors"


def load_demo_detector(weights_path: str | Path | None = None) -> DemoDetector:
    """Load the trained detector (eval mode) from safetensors; ``detector.json`` beside it names the labels."""
    from safetensors.torch import load_file

    path = Path(weights_path) if weights_path is not None else default_detector_path()
    meta = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    labels = tuple(str(c) for c in meta["labels"])
    if labels != LABELS:
        raise ValueError(f"{path.name} was trained for labels {labels}, not {LABELS}")
    model = build_detector()
    model.load_state_dict(load_file(str(path)))
    model.eval()
    return DemoDetector(model=model, labels=labels, input_size=INPUT_SIZE,
                        score_threshold=float(meta.get("score_threshold", SCORE_THRESHOLD)))
