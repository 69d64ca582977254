"""One detection of an object detector, as the CLI prints it and the window draws it (torch-free)."""

from __future__ import annotations

from dataclasses import dataclass

Box = tuple[float, float, float, float]  # x0, y0, x1, y1 in input pixels


@dataclass(frozen=True)
class Detection:
    box: Box
    label: int
    name: str
    score: float

    def to_dict(self) -> dict:
        """`{"box": [x0, y0, x1, y1], "label": int, "name": str, "score": float}`, as `--json` prints it."""
        return {"box": [float(v) for v in self.box], "label": int(self.label), "name": self.name,
                "score": float(self.score)}


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two boxes (0 when either has no area)."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    inter = max(w, 0.0) * max(h, 0.0)
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def box_target(found: Detection) -> str:
    """The target that follows this detection from run to run (an edit may reorder the boxes): its box in
    input pixels to a tenth of a pixel (finer for a box so small that a tenth would lose it), and its class."""
    for digits in (1, 3, 6):
        rounded = tuple(round(v, digits) for v in found.box)
        if rounded[0] < rounded[2] and rounded[1] < rounded[3] and iou(rounded, found.box) >= 0.9:
            break
    return "box:" + ",".join(f"{v:.{digits}f}".rstrip("0").rstrip(".") for v in rounded) + f"@{found.label}"


def is_box_in_pixels(target: str) -> bool:
    """`box:X0,Y0,X1,Y1[@CLASS]`: a box on one image (it names no detection on another)."""
    text = target.strip().lower()
    return text.startswith("box:") and "," in text.partition("@")[0]


def fits_task(target: str, task: str) -> bool:
    """A box target needs a detector, and a detector takes box targets (or auto); a text target needs an
    image-text model (CLIP, SigLIP)."""
    word = target.strip().lower()
    if word.startswith("text:") and task != "image-text":
        return False
    return (word.startswith("box:") or word == "auto") if task == "detection" else not word.startswith("box:")
