"""The objective: the scalar that backward starts from (the target as written is read by `target_text`)."""

from __future__ import annotations

import torch

from ..common.errors import RunError, SpecError
from .prompts import prompt_objective
from .text import USAGE, Box, Target, TargetKind, parse_target  # noqa: F401 (read from here too)


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


def objective(output: torch.Tensor, target: Target, input_hw: tuple[int, int] | None = None,
              model=None) -> tuple[torch.Tensor, int | None, Target]:
    """The scalar objective, the class it is about (None for sum/output/text) and the target resolved.
    `input_hw`: the input's height and width, for a `seg` box given in input pixels. `model`: the module
    that made `output`, which scores a `text:` target's prompts (`prompts`)."""
    if target.kind == "text":
        return prompt_objective(output, target, model), None, target
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


def same_target(index: int | None, resolved: Target) -> Target:
    """The target every further pass of one map scores (IG's path points, occlusion's copies): the class x
    resolved to, a `text:` or `seg:` target as it is (a segmentation's class map, in its box), else the sum of
    the output."""
    if resolved.kind == "seg":
        return resolved
    if index is not None:
        return Target("index", index)
    return resolved if resolved.kind == "text" else Target("sum")
