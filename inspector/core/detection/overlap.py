"""Box overlap (IoU) through torchvision.ops, imported when first needed.

Importing torchvision imports torch._dynamo, inductor, sympy and triton (about 1 s): the app's start-up,
and every model that is not a detector, never need them.
"""

from __future__ import annotations

import torch


def box_iou(boxes1: torch.Tensor, boxes2: torch.Tensor) -> torch.Tensor:
    """(N, M) intersection over union of two sets of (x1, y1, x2, y2) boxes: torchvision's."""
    from torchvision.ops import box_iou as torchvision_box_iou

    return torchvision_box_iou(boxes1, boxes2)
