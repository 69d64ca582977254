"""A run's target as the user writes it (`top1`, a class index, `seg:...`, `box:...`, `text:...`) read into a `Target`:
torch-free, so the CLI says a wrong one before torch is imported and the model loads. What the target
makes of the model's output is `objective`'s."""

from __future__ import annotations

import json
import numbers
from dataclasses import dataclass
from typing import Literal

from ..common.errors import SpecError

TargetKind = Literal["auto", "top1", "index", "sum", "output", "seg", "box", "text"]
Box = tuple[int, int, int, int]  # x0, y0, x1, y1 in input pixels, end exclusive
USAGE = ('auto, top1, a class index, sum, output, seg:CLASS[@X0,Y0,X1,Y1], box:K / box:X0,Y0,X1,Y1[@CLASS] or '
         'text:"PROMPT"[|"PROMPT"...]')
_TEXT_USAGE = ('text: takes a prompt (text:"a photo of a dog"), or several in quotes separated by | '
               '(text:"a dog"|"a cat": the first one\'s probability among them)')


@dataclass(frozen=True)
class Target:
    """`auto` picks top1 for (batch, classes) logits, output for one value, sum otherwise. `seg`:
    the sum of class `index`'s logits of a (batch, classes, H, W) output, over every pixel or a box.
    `box`: a detector's score of its `index`-th detection by score, or of the detection that best
    overlaps `box` (input pixels; among class `label`, an index or a name, when given). `text`: an image-text
    model's (CLIP, SigLIP) score of the image and `prompts[0]`; with more prompts, the first one's softmax
    probability among them."""

    kind: TargetKind = "auto"
    index: int | None = None
    box: Box | tuple[float, float, float, float] | None = None
    label: int | str | None = None
    prompts: tuple[str, ...] = ()

    def __str__(self) -> str:
        if self.kind == "text":  # each prompt in JSON's quotes, so it reads back as it was
            return "text:" + "|".join(json.dumps(p, ensure_ascii=False) for p in self.prompts)
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


def _parse_text(text: str) -> Target:
    """`text:PROMPT`, `text:"PROMPT"` or `text:"P1"|"P2"|...` (quoted as JSON quotes strings, \\" inside one)."""
    body = text[len("text:"):].strip()
    if not body.startswith('"'):  # one bare prompt, or bare prompts split at | (the shell ate the quotes)
        if '"' in body:
            raise SpecError(f"Target {text!r}: quote every prompt or none ({_TEXT_USAGE}).")
        prompts = [p.strip() for p in body.split("|")]
    else:
        prompts, at, decoder = [], 0, json.JSONDecoder(strict=False)
        while True:
            if at == len(body):
                raise SpecError(f"Target {text!r}: a prompt is empty after the last | ({_TEXT_USAGE}).")
            if body[at:at + 1] != '"':
                raise SpecError(f"Target {text!r}: expected a prompt in quotes at {body[at:][:20]!r} ({_TEXT_USAGE}).")
            try:
                prompt, at = decoder.raw_decode(body, at)
            except ValueError:
                raise SpecError(f"Target {text!r}: a prompt's closing quote is missing ({_TEXT_USAGE}).") from None
            prompts.append(prompt.strip())
            rest = body[at:].lstrip()
            if not rest:
                break
            if not rest.startswith("|"):
                raise SpecError(f"Target {text!r}: prompts are separated by | ({_TEXT_USAGE}).")
            at = len(body) - len(rest[1:].lstrip())
    if not all(prompts):
        raise SpecError(f"Target {text!r}: a prompt is empty ({_TEXT_USAGE}).")
    return Target("text", prompts=tuple(prompts))


def _class_index(value: int) -> Target:
    if value < 0:
        raise SpecError(f"Class index must be >= 0, got {value}.")
    return Target("index", value)


def parse_target(text: str | int | Target | None) -> Target:
    """`top1`, a class index, `sum`, `output`, `seg:CLASS[@X0,Y0,X1,Y1]`, `box:...` or `text:...`. The same words as text
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
    if word.startswith("text:"):
        return _parse_text(text.strip())  # a prompt keeps its case
    try:
        index = int(word)
    except ValueError:
        raise SpecError(f"Unknown target {text!r}. Use {USAGE}.") from None
    return _class_index(index)



def prompt_first(target: Target, i: int) -> Target:
    """A `text:` target with its `i`-th prompt moved first, the others after it in their order: of several prompts,
    that prompt's probability among the same prompts."""
    p = target.prompts
    return Target("text", prompts=(p[i], *p[:i], *p[i + 1:]))


def each_prompt_first(target: Target) -> tuple[Target, ...]:
    """A `text:` target of several prompts once for each prompt (the first time it is named) with that prompt first
    (`prompt_first`): the maps the app's Each prompt draws side by side; () for any other target."""
    if target.kind != "text" or len(target.prompts) < 2:
        return ()
    return tuple(prompt_first(target, i) for i, p in enumerate(target.prompts) if p not in target.prompts[:i])


def target_words(target: str) -> str:
    """A target as a caption says it: a `text:` one by its prompts (`"a cat"`, its score; `"a cat" among "a dog",
    "a car"`, its probability among them), any other as it is written."""
    try:
        parsed = parse_target(target)
    except SpecError:
        return target
    if parsed.kind != "text":
        return target
    first, *others = (json.dumps(p, ensure_ascii=False) for p in parsed.prompts)
    return first + (" among " + ", ".join(others) if others else "")
