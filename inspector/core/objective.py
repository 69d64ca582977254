"""The objective: the scalar that backward starts from."""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Literal

import torch

from .errors import RunError, SpecError

TargetKind = Literal["auto", "top1", "index", "sum", "output", "seg", "box"]
Box = tuple[int, int, int, int]  # x0, y0, x1, y1 in input pixels, end exclusive
USAGE = "auto, top1, a class index, sum, output, seg:CLASS[@X0,Y0,X1,Y1] or box:K / box:X0,Y0,X1,Y1[@CLASS]"


@dataclass(frozen=True)
class Target:
    """`auto` picks top1 for (batch, classes) logits, output for one value, sum otherwise. `seg`:
    the sum of class `index`'s logits of a (batch, classes, H, W) output, over every pixel or a box.
    `box`: a detector's score of its `index`-th detection by score, or of the detection that best
    overlaps `box` (input pixels; among class `label`, an index or a name, when given)."""

    kind: TargetKind = "auto"
    index: int | None = None
    box: Box | tuple[float, float, float, float] | None = None
    label: int | str | None = None

    def __str__(self) -> str:
        if self.kind == "seg":
            return f"seg:{self.index}" + ("@" + ",".join(map(str, self.box)) if self.box else "")
        if self.kind == "box":
            if self.box is None:
                return f"box:{self.index}"
            return "box:" + ",".join(f"{v:g}" for v in self.box) + ("" if self.label is None else f"@{self.label}")
        return str(self.index) if self.kind == "index" else self.kind


def _parse_seg(text: str) -> Target:
    """`seg:CLASS` or `seg:CLASS@X0,Y0,X1,Y1`."""
    cls, _, box = text[len("seg:"):].partition("@")
    if not cls.strip().isdecimal():
        raise SpecError(f"Target {text!r}: seg:CLASS takes a class index (seg:15 is VOC's person), "
                        f"optionally @X0,Y0,X1,Y1 for a box in input pixels.")
    if not box:
        return Target("seg", int(cls))
    parts = [p.strip() for p in box.split(",")]
    if len(parts) != 4 or not all(p.isdecimal() for p in parts):
        raise SpecError(f"Target {text!r}: the box is four whole numbers X0,Y0,X1,Y1 (input pixels).")
    x0, y0, x1, y1 = map(int, parts)
    if x1 <= x0 or y1 <= y0:
        raise SpecError(f"Target {text!r}: the box needs X0 < X1 and Y0 < Y1.")
    return Target("seg", int(cls), (x0, y0, x1, y1))


def _parse_box(text: str) -> Target:
    """`box:K`, `box:X0,Y0,X1,Y1` or `box:X0,Y0,X1,Y1@CLASS` (a class index or name)."""
    body, at, label = text[len("box:"):].partition("@")
    body, label = body.strip(), label.strip()
    if body.isdecimal() and not at:
        return Target("box", int(body))
    parts = [p.strip() for p in body.split(",")]
    try:
        x0, y0, x1, y1 = (float(p) for p in parts)
    except ValueError:
        raise SpecError(f"Target {text!r}: box:K takes a detection's rank (box:0 is the best), box:X0,Y0,X1,Y1 "
                        f"a box in input pixels, optionally @CLASS (an index or a name).") from None
    if not x0 < x1 or not y0 < y1:
        raise SpecError(f"Target {text!r}: the box needs X0 < X1 and Y0 < Y1.")
    if at and not label:
        raise SpecError(f"Target {text!r}: a class (an index or a name) follows the @.")
    return Target("box", None, (x0, y0, x1, y1), (int(label) if label.isdecimal() else label) if at else None)


def _class_index(value: int) -> Target:
    if value < 0:
        raise SpecError(f"Class index must be >= 0, got {value}.")
    return Target("index", value)


def parse_target(text: str | int | Target | None) -> Target:
    """`top1`, a class index, `sum`, `output`, or `seg:CLASS[@X0,Y0,X1,Y1]`. The same words as text
    (the CLI's `--target`) or as a Python value; anything else is a SpecError."""
    if isinstance(text, Target):
        return text
    if text is None or (isinstance(text, str) and text == ""):  # (an array compared with "" is ambiguous)
        return Target()
    if isinstance(text, numbers.Integral) and not isinstance(text, bool):
        text = int(text)  # numpy's integers too
    if isinstance(text, bool) or not isinstance(text, (str, int)):
        raise SpecError(f"Unknown target {text!r}. Use {USAGE}.")
    if isinstance(text, int):
        return _class_index(text)
    word = text.strip().lower()
    if word in ("auto", "top1", "sum", "output"):
        return Target(word)  # type: ignore[arg-type]
    if word.startswith("seg:"):
        return _parse_seg(word)
    if word.startswith("box:"):
        return _parse_box(text.strip())  # a class name keeps its case
    try:
        index = int(word)
    except ValueError:
        raise SpecError(f"Unknown target {text!r}. Use {USAGE}.") from None
    return _class_index(index)


def primary_output(output) -> torch.Tensor:
    """The tensor to read logits from when a model returns a tuple or dict."""
    if isinstance(output, torch.Tensor):
        return output
    if isinstance(output, dict):
        output = output.get("out", next(iter(output.values()), None))
        return primary_output(output)
    if isinstance(output, (tuple, list)) and output:
        return primary_output(output[0])
    raise RunError(f"The model returned {type(output).__name__}, not a tensor; cannot pick an objective.")


def _segment_objective(output: torch.Tensor, target: Target, input_hw: tuple[int, int] | None) -> torch.Tensor:
    if output.ndim != 4:
        raise SpecError(f"Target {target} needs a (batch, classes, H, W) output; this model returns shape "
                        f"{tuple(output.shape)}.")
    if target.index >= output.shape[1]:
        raise SpecError(f"Class index {target.index} is out of range: the output has {output.shape[1]} classes.")
    logits = output[:, target.index]
    if target.box is None:
        return logits.sum()
    h, w = logits.shape[-2:]
    in_h, in_w = input_hw or (h, w)
    x0, y0, x1, y1 = target.box
    # the box in output pixels (torchvision's segmentation outputs are already at the input's size)
    r0, r1 = int(y0 * h // in_h), -(-y1 * h // in_h)
    c0, c1 = int(x0 * w // in_w), -(-x1 * w // in_w)
    r0, r1, c0, c1 = max(r0, 0), min(r1, h), max(c0, 0), min(c1, w)
    if r1 <= r0 or c1 <= c0:
        raise SpecError(f"Target {target}: the box lies outside the {in_w}x{in_h} input.")
    return logits[..., r0:r1, c0:c1].sum()


def objective(output: torch.Tensor, target: Target,
              input_hw: tuple[int, int] | None = None) -> tuple[torch.Tensor, int | None, Target]:
    """The scalar objective, the class it is about (None for sum/output) and the target resolved.
    `input_hw`: the input's height and width, for a `seg` box given in input pixels."""
    if target.kind == "auto" and output.ndim == 4 and output.shape[1] > 1:  # a segmentation
        common = torch.bincount(output[0].detach().argmax(dim=0).reshape(-1), minlength=output.shape[1])
        target = Target("seg", int(common.argmax()))
    if target.kind == "box":
        raise SpecError(f"Target {target} is for object detectors; this model does not detect objects (its output "
                        f"is {tuple(output.shape)}, not boxes and scores).")
    if target.kind == "seg":
        return _segment_objective(output, target, input_hw), target.index, target
    if output.ndim == 4 and target.kind in ("top1", "index"):
        raise SpecError(f"Target {target} is for (batch, classes) logits; this model returns {tuple(output.shape)} "
                        f"maps (a segmentation?). Use seg:CLASS or seg:CLASS@X0,Y0,X1,Y1.")
    if target.kind == "auto":
        if output.ndim == 2 and output.shape[1] > 1:
            target = Target("top1")
        else:
            target = Target("output" if output.numel() == 1 else "sum")
    if target.kind == "sum":
        return output.sum(), None, target
    if target.kind == "output":
        if output.numel() != 1:
            raise SpecError(
                f"Target 'output' needs a single-element output; this model returns shape "
                f"{tuple(output.shape)}. Use top1, a class index or sum."
            )
        return output.reshape(()), None, target
    if output.ndim < 2:
        raise SpecError(
            f"Target {target} needs (batch, classes) logits; the output has shape {tuple(output.shape)}. "
            f"Use sum or output."
        )
    flat = output.reshape(output.shape[0], -1)
    if target.kind == "index":
        if target.index >= flat.shape[1]:
            raise SpecError(f"Class index {target.index} is out of range: the model has {flat.shape[1]} outputs.")
        return flat[:, target.index].sum(), target.index, target
    best = flat.detach().argmax(dim=1)
    return flat.gather(1, best[:, None]).sum(), int(best[0]), target
