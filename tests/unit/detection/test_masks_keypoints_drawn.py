"""Mask and Keypoint R-CNN's extras drawn over the input: a shown detection's mask tinted in its colour (blend
worked out by hand), its keypoints dotted and joined by COCO's bones; a hidden detection's left alone."""

from __future__ import annotations

import numpy as np

from inspector.core.detection.picture import COCO_KEYPOINTS, MASK_ALPHA, colour_of, draw_detections
from inspector.core.records.detections import Detection

GREY = 100
SHOWN = Detection((0, 50, 40, 90), 0, "person", 0.9)
HIDDEN = Detection((60, 50, 99, 90), 1, "dog", 0.2)  # below the score shown


def _picture():
    return np.full((100, 100, 3), GREY, np.uint8)


def test_a_shown_detections_mask_is_tinted_and_a_hidden_ones_is_not():
    masks = np.zeros((2, 100, 100), np.float32)
    masks[0, 60:80, 10:30] = 0.9
    masks[0, 60:80, 30:35] = 0.3  # under MASK_LEVEL: not the object's
    masks[1, 60:80, 70:90] = 1.0
    drawn = draw_detections(_picture(), [SHOWN, HIDDEN], 0.5, masks=masks)
    blend = tuple(round(GREY * (1 - MASK_ALPHA) + c * MASK_ALPHA) for c in colour_of(0))
    assert tuple(drawn[70, 20]) == blend
    assert tuple(drawn[70, 32]) == (GREY,) * 3 and tuple(drawn[70, 80]) == (GREY,) * 3
    assert np.array_equal(draw_detections(_picture(), [SHOWN, HIDDEN], 0.5)[70, 32], drawn[70, 32])


def test_keypoints_are_dotted_and_joined_by_coco_bones():
    points = np.zeros((1, len(COCO_KEYPOINTS), 3), np.float32)
    left, right = COCO_KEYPOINTS.index("left_shoulder"), COCO_KEYPOINTS.index("right_shoulder")  # a bone
    points[0, left] = (60, 20, 1)
    points[0, right] = (90, 20, 1)
    points[0, 0] = (75, 5, 0)  # the nose, not visible: no dot
    drawn = draw_detections(_picture(), [SHOWN], 0.5, keypoints=points)
    colour = colour_of(0)
    assert tuple(drawn[20, 60]) == colour and tuple(drawn[20, 90]) == colour  # the dots
    assert tuple(drawn[20, 75]) == colour  # the bone between them
    assert tuple(drawn[5, 75]) == (GREY,) * 3 and tuple(drawn[35, 75]) == (GREY,) * 3
