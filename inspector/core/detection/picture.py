"""A detector's picture: its boxes drawn over the input at the size it is shown, with class and score
(numpy and Pillow only, so the window and the CLI's overlays draw the same), and which box a click picks.

`min_score` is what the viewer chose to see (the window's slider): it hides boxes, it never changes
which detection `box:K` names (that is the model's own threshold)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image, ImageDraw

from ..records.detections import Detection
from .changes import BoxChange
from .tags import TAG_PAD, draw_tag, fitted, tag_font, tag_rect, text_width  # noqa: F401  (the tags' rules too)

CHOSEN = (255, 212, 0)  # the target's box: the yellow the atlas outlines its regions in
#: Box colours by class, cycling: matplotlib's tab10 without its olive (too near CHOSEN's yellow)
COLOURS = ((31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189), (140, 86, 75),
           (227, 119, 194), (127, 127, 127), (23, 190, 207))
APPEARED, VANISHED, MOVED, WAS = (0, 200, 83), (229, 57, 53), (255, 145, 0), (220, 220, 220)  # draw_changes
MASK_LEVEL, MASK_ALPHA = 0.5, 0.45  # a mask's pixels from this probability are tinted, this much
#: COCO's person keypoints (Keypoint R-CNN's 17) and the bones drawn between them
COCO_KEYPOINTS = ("nose", "left_eye", "right_eye", "left_ear", "right_ear", "left_shoulder", "right_shoulder",
                  "left_elbow", "right_elbow", "left_wrist", "right_wrist", "left_hip", "right_hip", "left_knee",
                  "right_knee", "left_ankle", "right_ankle")
COCO_SKELETON = ((15, 13), (13, 11), (16, 14), (14, 12), (11, 12), (5, 11), (6, 12), (5, 6), (5, 7), (6, 8), (7, 9),
                 (8, 10), (1, 2), (0, 1), (0, 2), (1, 3), (2, 4), (3, 5), (4, 6))
DEFAULT_SHOWN = 0.5  # the score a trained detector's boxes are shown from
FEW = 10  # when nothing scores DEFAULT_SHOWN (random weights), the best FEW are shown


MOST = 20  # boxes shown at once: more hide the picture (random weights' scores tie near chance)
EACH_BOX_MOST = 9  # boxes "each box" explains at most, unless asked for more (a 3 x 3 grid)


def shown(detections: Sequence[Detection], min_score: float) -> list[int]:
    """The ranks of the best MOST detections scoring at least `min_score`."""
    return [k for k, d in enumerate(detections) if d.score >= min_score][:MOST]


def default_min_score(detections: Sequence[Detection]) -> float:
    """DEFAULT_SHOWN, or the FEW-th best score when nothing reaches it (random weights score near chance)."""
    if not detections or detections[0].score >= DEFAULT_SHOWN:
        return DEFAULT_SHOWN
    return detections[min(FEW, len(detections)) - 1].score


def boxes_to_explain(detections: Sequence[Detection], min_score: float | None = None,
                     most: int = EACH_BOX_MOST) -> list[int]:
    """The ranks of the boxes "each box" explains (the CLI's --each-box, the app's button): those shown from
    `min_score` (None: default_min_score), the best `most`."""
    score = default_min_score(detections) if min_score is None else min_score
    return shown(detections, score)[:most]


def pick_at(detections: Sequence[Detection], x: float, y: float, min_score: float) -> int | None:
    """The rank of the smallest shown box holding the input pixel (x, y) (nested boxes: the inner one)."""
    holding = [k for k in shown(detections, min_score)
               if detections[k].box[0] <= x <= detections[k].box[2] and detections[k].box[1] <= y <= detections[k].box[3]]
    area = lambda k: (detections[k].box[2] - detections[k].box[0]) * (detections[k].box[3] - detections[k].box[1])
    return min(holding, key=lambda k: (area(k), k)) if holding else None


def colour_of(label: int) -> tuple[int, int, int]:
    return COLOURS[label % len(COLOURS)]


def _fitted(picture: np.ndarray, size: int | None) -> tuple[Image.Image, float]:
    image = Image.fromarray(np.ascontiguousarray(picture))
    if size is None:
        return image, 1.0
    scale = size / max(picture.shape[:2])
    w, h = max(1, round(picture.shape[1] * scale)), max(1, round(picture.shape[0] * scale))
    return image.resize((w, h), Image.NEAREST if scale >= 1 else Image.BOX), scale


def draw_detections(picture: np.ndarray, detections: Sequence[Detection], min_score: float,
                    chosen: int | None = None, size: int | None = None, masks: np.ndarray | None = None,
                    keypoints: np.ndarray | None = None) -> np.ndarray:
    """`picture` (H, W, 3 uint8, input pixels) scaled to `size` pixels a side (None: as is), each detection
    scoring at least `min_score` outlined in its class's colour and tagged "name score"; the `chosen` rank
    (the target's box) in yellow, drawn last so nothing covers it. With `masks` (D, H, W) in [0, 1] (Mask
    R-CNN's, by rank) each shown detection's pixels from MASK_LEVEL are tinted in its colour; with
    `keypoints` (D, K, 3) of x, y, visibility in input pixels (Keypoint R-CNN's) its visible points are
    dotted, joined by COCO's skeleton when K is 17."""
    image, scale = _fitted(picture, size)
    others = [k for k in shown(detections, min_score) if k != chosen]
    target = [chosen] if chosen is not None and 0 <= chosen < len(detections) else []  # shown whatever its score
    ranks = others + target  # drawn in this order: the target last, on top
    colour = lambda k: CHOSEN if k == chosen else colour_of(detections[k].label)  # noqa: E731
    if masks is not None:
        image = _tinted(image, masks, [(k, colour(k)) for k in ranks if k < len(masks)])
    draw, font = ImageDraw.Draw(image), tag_font()
    for k in [*reversed(others), *target]:  # the best of the others drawn last of them, on top
        found = detections[k]
        _box(draw, font, found.box, f"{found.name} {found.score:.2f}", scale, colour(k), 3 if k == chosen else 2)
    if keypoints is not None:
        for k in ranks:
            if k < len(keypoints):
                _skeleton(draw, np.asarray(keypoints[k], np.float64) * (scale, scale, 1), colour(k))
    return np.asarray(image)


def _tinted(image: Image.Image, masks: np.ndarray, coloured: list[tuple[int, tuple[int, int, int]]]) -> Image.Image:
    """`image` with each (rank, colour)'s mask, resized to it, blended in at MASK_ALPHA."""
    rgb = np.asarray(image).astype(np.float64)
    for k, colour in coloured:
        mask = Image.fromarray(np.clip(np.asarray(masks[k], np.float64) * 255, 0, 255).round().astype(np.uint8))
        inside = np.asarray(mask.resize(image.size, Image.BILINEAR)) >= MASK_LEVEL * 255
        rgb[inside] = rgb[inside] * (1 - MASK_ALPHA) + np.asarray(colour, np.float64) * MASK_ALPHA
    return Image.fromarray(rgb.round().astype(np.uint8))


def _skeleton(draw: ImageDraw.ImageDraw, points: np.ndarray, colour) -> None:
    """One detection's keypoints (K, 3: x, y, visibility in the picture's pixels): COCO's bones, then dots."""
    seen = points[:, 2] > 0
    if len(points) == len(COCO_KEYPOINTS):
        for a, b in COCO_SKELETON:
            if seen[a] and seen[b]:
                draw.line((*points[a, :2], *points[b, :2]), fill=colour, width=2)
    for x, y, _v in points[seen]:
        draw.ellipse((x - 2.5, y - 2.5, x + 2.5, y + 2.5), fill=colour, outline=(0, 0, 0))


def draw_changes(picture: np.ndarray, before: Sequence[Detection], after: Sequence[Detection],
                 changes: Sequence[BoxChange], size: int | None = None) -> np.ndarray:
    """The second run's boxes over `picture` (as `draw_detections`), marked by what happened to them
    (`changes`, inspector.core.detection.changes): kept in their class's colour; moved in orange, where it
    was dashed; appeared in green, tagged "+"; vanished dashed in red, tagged "-" with its score before (and
    now, where it is still found below the score shown)."""
    image, scale = _fitted(picture, size)
    draw, font = ImageDraw.Draw(image), tag_font()
    order = {"vanished": 0, "kept": 1, "moved": 2, "appeared": 3}  # what changed drawn last, on top
    for change in sorted(changes, key=lambda c: order[c.kind]):
        if change.kind == "vanished":
            was = before[change.before]
            now = f", now {after[change.after].score:.2f}" if change.after is not None else ""
            _box(draw, font, was.box, f"- {was.name} {was.score:.2f}{now}", scale, VANISHED, 2, dashed=True)
            continue
        found = after[change.after]
        if change.kind == "kept":
            _box(draw, font, found.box, f"{found.name} {found.score:.2f}", scale, colour_of(found.label), 2)
        elif change.kind == "moved":
            _dashed(draw, tuple(v * scale for v in before[change.before].box), WAS, 1)
            _box(draw, font, found.box, f"{found.name} {found.score:.2f} moved", scale, MOVED, 3)
        else:
            _box(draw, font, found.box, f"+ {found.name} {found.score:.2f}", scale, APPEARED, 3)
    return np.asarray(image)


def _dashed(draw: ImageDraw.ImageDraw, box, colour, width: int, dash: float = 6.0) -> None:
    """A rectangle's outline in dashes of `dash` pixels (Pillow draws only solid lines)."""
    x0, y0, x1, y1 = box
    for (ax, ay), (bx, by) in (((x0, y0), (x1, y0)), ((x1, y0), (x1, y1)), ((x1, y1), (x0, y1)), ((x0, y1), (x0, y0))):
        length = max(abs(bx - ax), abs(by - ay))
        steps = max(1, int(length // dash))
        for s in range(0, steps, 2):
            t0, t1 = s / steps, min(s + 1, steps) / steps
            draw.line((ax + (bx - ax) * t0, ay + (by - ay) * t0, ax + (bx - ax) * t1, ay + (by - ay) * t1),
                      fill=colour, width=width)


def _box(draw: ImageDraw.ImageDraw, font, box, text: str, scale: float, colour, width: int,
         dashed: bool = False) -> None:
    x0, y0, x1, y1 = (v * scale for v in box)
    if dashed:
        _dashed(draw, (x0 - 1, y0 - 1, x1 + 1, y1 + 1), (0, 0, 0), width + 2)
        _dashed(draw, (x0, y0, x1, y1), colour, width)
    else:
        draw.rectangle((x0 - 1, y0 - 1, x1 + 1, y1 + 1), outline=(0, 0, 0), width=width + 2)  # seen on any background
        draw.rectangle((x0, y0, x1, y1), outline=colour, width=width)
    draw_tag(draw, (x0, y0), text, colour, font)
