"""The objective: the scalar that backward starts from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

from .errors import RunError, SpecError

TargetKind = Literal["auto", "top1", "index", "sum", "output"]


@dataclass(frozen=True)
class Target:
    """`auto` picks top1 for (batch, classes) logits, output for one value, sum otherwise."""

    kind: TargetKind = "auto"
    index: int | None = None

    def __str__(self) -> str:
        return str(self.index) if self.kind == "index" else self.kind


def parse_target(text: str | int | Target | None) -> Target:
    """`top1`, a class index, `sum` or `output`."""
    if isinstance(text, Target):
        return text
    if text is None or text == "":
        return Target()
    if isinstance(text, int):
        return Target("index", text)
    word = text.strip().lower()
    if word in ("auto", "top1", "sum", "output"):
        return Target(word)  # type: ignore[arg-type]
    try:
        index = int(word)
    except ValueError:
        raise SpecError(f"Unknown target {text!r}. Use auto, top1, a class index, sum or output.") from None
    if index < 0:
        raise SpecError(f"Class index must be >= 0, got {index}.")
    return Target("index", index)


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


def objective(output: torch.Tensor, target: Target) -> tuple[torch.Tensor, int | None, Target]:
    """The scalar objective, the class it is about (None for sum/output) and the target resolved."""
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
