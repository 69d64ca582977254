"""Edits: operations a hook applies to a tensor at a site, written `KEY=OP(ARGS)`.

Every op returns a new tensor and never changes its argument in place. Arguments are
read as Python literals only, never evaluated as code. The ops on a tensor alone are
registered here into the one op table (`table.OPS`); other packages register theirs.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # torch is imported where an edit is applied, so the app can parse edits before it loads
    import torch

from ..common.arguments import need_text
from ..common.errors import SpecError
from ..common.keys import Key, parse_key
from .table import OPS, OpSpec, register_op


def _channel_dim(t: torch.Tensor) -> int:
    """Channels: dim 1 of (N, C, ...) maps and (N, F) vectors; the last dim of (N, T, D) tokens."""
    if t.ndim == 3:
        return 2
    if t.ndim < 2:
        return 0
    return 1


def _channel_mask(t: torch.Tensor, channels: list[int], keep: bool) -> torch.Tensor:
    dim = _channel_dim(t)
    size = t.shape[dim]
    bad = [c for c in channels if not -size <= c < size]
    if bad:
        raise SpecError(f"Channel(s) {bad} out of range: this tensor has {size} channels (dim {dim}).")
    mask = t.new_zeros(size)
    mask[channels] = 1
    if not keep:
        mask = 1 - mask
    shape = [1] * t.ndim
    shape[dim] = size
    # where, not multiply: a zeroed channel holding inf or NaN must still come out as zeros.
    return t.where(mask.view(shape) != 0, t.new_zeros(()))


def _scale(t, k):
    return t * k


def _clamp(t, min=None, max=None):
    if min is None and max is None:
        raise SpecError("clamp needs min, max or both, e.g. clamp(min=0).")
    return t.clamp(min=min, max=max)


def _zero(t):
    import torch

    return torch.zeros_like(t)


def _noise(t, std, seed=0):
    import torch

    gen = torch.Generator(device="cpu").manual_seed(int(seed))
    sample = torch.randn(t.shape, generator=gen, dtype=torch.float32).to(device=t.device, dtype=t.dtype)
    return t + std * sample


def _clip_norm(t, max):
    import torch

    norm = torch.linalg.vector_norm(t.float())
    factor = torch.clamp(max / (norm + 1e-12), max=1.0).to(t.dtype)
    return t * factor


def _zero_channels(t, channels):
    return _channel_mask(t, list(channels), keep=False)


def _keep_channels(t, channels):
    return _channel_mask(t, list(channels), keep=True)


def _guided(t):
    return t.clamp(min=0)


def _zero_heads(t, heads):
    raise SpecError("zero_heads acts on an attention module as a whole (LAYER:attention=zero_heads([...])), "
                    "not on a captured tensor.")


def _sign(t):
    return t.sign()


def _abs(t):
    return t.abs()


def _check_clamp(_name, values):
    if values.get("min") is None and values.get("max") is None:
        raise SpecError("clamp needs min, max or both, e.g. clamp(min=0).")
    if None not in (values.get("min"), values.get("max")) and values["min"] > values["max"]:
        raise SpecError(f"clamp: min ({values['min']}) is above max ({values['max']}).")


def _check_noise(_name, values):
    if "seed" in values and (not isinstance(values["seed"], int) or values["seed"] < 0):
        raise SpecError(f"noise: seed must be a whole number >= 0, not {values['seed']!r}.")
    if values["std"] < 0:
        raise SpecError("noise: std must be >= 0.")


def _check_clip_norm(_name, values):
    if values["max"] <= 0:
        raise SpecError("clip_norm: max must be > 0.")


for _name, _spec in {
    "scale": OpSpec(_scale, ("k",), 1, "scale(k): multiply by k"),
    "clamp": OpSpec(_clamp, ("min", "max"), 0, "clamp(min=None, max=None): limit to [min, max]",
                    check_args=_check_clamp),
    "zero": OpSpec(_zero, (), 0, "zero(): replace with zeros"),
    "noise": OpSpec(_noise, ("std", "seed"), 1, "noise(std, seed=0): add Gaussian noise", check_args=_check_noise),
    "clip_norm": OpSpec(_clip_norm, ("max",), 1, "clip_norm(max): rescale so the L2 norm is at most max",
                        check_args=_check_clip_norm),
    "zero_channels": OpSpec(_zero_channels, ("channels",), 1, "zero_channels([i, ...]): zero these channels"),
    "keep_channels": OpSpec(_keep_channels, ("channels",), 1, "keep_channels([i, ...]): zero all other channels"),
    "zero_heads": OpSpec(_zero_heads, ("heads",), 1, "zero_heads([h, ...]): at LAYER:attention, remove these "
                         "heads' contribution (their outputs are zero before the output projection)"),
    "sign": OpSpec(_sign, (), 0, "sign(): -1, 0 or 1"),
    "abs": OpSpec(_abs, (), 0, "abs(): absolute value"),
    "guided": OpSpec(_guided, (), 0, "guided(): keep positive values only (guided backprop at a ReLU's grad_input)"),
}.items():
    register_op(_name, _spec)
del _name, _spec


def ops_list() -> str:
    """Every op with its arguments, on one line: "scale(k), clamp(min=None, max=None), ..."."""
    return ", ".join(spec.help.split(":", 1)[0] for spec in OPS.values())


@dataclass(frozen=True)
class Edit:
    """`key=op(args)`. A key without `#K` applies to every call of the module."""

    key: Key
    op: str
    args: tuple[tuple[str, Any], ...] = field(default=())
    enabled: bool = True

    def apply(self, tensor: torch.Tensor) -> torch.Tensor:
        """This edit's op on `tensor`, the value at its key (a new tensor)."""
        spec = OPS[self.op]
        if spec.sites and self.key.site not in spec.sites:
            raise SpecError(f"Edit {self}: {self.op} applies at "
                            f"{' or '.join(f'{self.key.layer}:{s}' for s in spec.sites)} only, not at {self.key.site}.")
        args = dict(self.args)
        if spec.takes_layer:
            args["layer"] = self.key.layer
        try:
            return spec.fn(tensor, **args)
        except SpecError as exc:
            raise SpecError(f"Edit {self}: {exc}") from None
        except (TypeError, ValueError, RuntimeError, IndexError) as exc:
            raise SpecError(f"Edit {self} failed on a tensor of shape {tuple(tensor.shape)}: {exc}") from exc

    def matches(self, key: Key) -> bool:
        if self.key.layer != key.layer or self.key.site != key.site:
            return False
        if self.key.call and self.key.call != key.call:
            return False
        return self.key.index is None or self.key.index == key.index

    def op_text(self) -> str:
        return f"{self.op}({', '.join(f'{name}={value!r}' for name, value in self.args)})"

    def __str__(self) -> str:
        return f"{self.key}={self.op_text()}"


def parse_op(text: str) -> tuple[str, tuple[tuple[str, Any], ...]]:
    """Read `op(args)` into a name and named literal arguments, checked against the op."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        hint = _text_hint(text)
        raise SpecError(f"Cannot read {text!r}; write an op like scale(2) or clamp(min=0){hint}.") from None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise SpecError(f"Cannot read {text!r}; write an op like scale(2) or clamp(min=0).")
    name = node.func.id
    if name not in OPS:
        raise SpecError(f"Unknown op {name!r}; the ops are {ops_list()}.")
    spec = OPS[name]
    try:
        positional = [ast.literal_eval(arg) for arg in node.args]
        named = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords}
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        hint = spec.hint if spec.texts else ""
        raise SpecError(f"Arguments of {text!r} must be plain numbers or lists{hint}.") from None
    if None in named or len(positional) > len(spec.params):
        raise SpecError(f"Too many arguments in {text!r}. Usage: {spec.help}")
    values = dict(zip(spec.params, positional))
    for param, value in named.items():
        if param not in spec.params:
            raise SpecError(f"{name} has no argument {param!r}. Usage: {spec.help}")
        if param in values:
            raise SpecError(f"{param!r} given twice in {text!r}.")
        values[param] = value
    return name, _checked_args(name, spec, values)


def _checked_args(name: str, spec: OpSpec, values: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """`values` (every name one of the op's params) checked against the op, in its params' order."""
    missing = [p for p in spec.params[: spec.required] if values.get(p) is None]
    if missing:
        raise SpecError(f"{name} needs {', '.join(missing)}. Usage: {spec.help}")
    _check_values(name, spec, values)
    return tuple((p, values[p]) for p in spec.params if p in values)


def _text_hint(text: str) -> str:
    """The hint of the op `text` names, where it gives one of its text arguments by name (dict=...)."""
    named = re.match(r"\s*([A-Za-z_]\w*)\s*\(", text)
    spec = OPS[named.group(1)] if named and named.group(1) in OPS else None
    return spec.hint if spec is not None and any(f"{param}=" in text for param in spec.texts) else ""


def _check_values(name: str, spec: OpSpec, values: dict[str, Any]) -> None:
    for param, value in values.items():
        if param in spec.texts:
            continue  # the op's own check reads it
        if param in ("channels", "heads"):
            if not isinstance(value, (list, tuple)) or not all(isinstance(v, int) for v in value):
                raise SpecError(f"{name}: {param} must be a list of integers, e.g. [0, 3].")
        elif value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise SpecError(f"{name}: {param} must be a number, not {value!r}.")
        elif value is not None and not math.isfinite(value):
            raise SpecError(f"{name}: {param} must be a finite number, not {value!r}.")
    if spec.check_args is not None:
        spec.check_args(name, values)


def parse_edit(text: str) -> Edit:
    """Read `KEY=OP(ARGS)`, e.g. `relu1:grad_input=clamp(min=0)`."""
    key_text, sep, op_text = need_text(text, "An edit").partition("=")
    if not sep or not op_text.strip():
        raise SpecError(f"Cannot read edit {text!r}. Write KEY=OP(ARGS), e.g. relu1:grad_input=clamp(min=0).")
    key = parse_key(key_text)
    if not key.layer:
        raise SpecError(f"Edit {text!r}: edits apply to a layer or parameter site, not to {key}.")
    op, args = parse_op(op_text)
    _check_site(key, op, repr(text))
    return Edit(key, op, args)


def make_edit(key: Key, op: str, **args: Any) -> Edit:
    """The edit `key=op(**args)` as a record, checked as `parse_edit` checks its text: what a caller holding the
    values builds (the app's concept edits); the text is for the command line and sessions:
    `make_edit(Key("relu3", "output"), "ablate_concept", id=2, dict="c")` is
    `parse_edit("relu3:output=ablate_concept(2, 'c')")`."""
    if op not in OPS:
        raise SpecError(f"Unknown op {op!r}; the ops are {ops_list()}.")
    spec = OPS[op]
    for param in args:
        if param not in spec.params:
            raise SpecError(f"{op} has no argument {param!r}. Usage: {spec.help}")
    shown = f"{key}={op}({', '.join(f'{name}={value!r}' for name, value in args.items())})"
    if not key.layer:
        raise SpecError(f"Edit {shown!r}: edits apply to a layer or parameter site, not to {key}.")
    checked = _checked_args(op, spec, dict(args))
    _check_site(key, op, repr(shown))
    return Edit(key, op, checked)


def _check_site(key: Key, op: str, shown: str) -> None:
    sites = OPS[op].sites
    if sites and key.site not in sites:
        raise SpecError(f"Edit {shown}: {op} applies at {' or '.join(f'{key.layer}:{s}' for s in sites)} "
                        f"only, not at {key.site}.")


def check_edits(edits: Iterable[Edit], model) -> None:
    """Before a run of `model` (its source, or the loaded model): SpecError for the first enabled edit that its op
    says cannot apply to it (a concept edit whose dictionary is missing, of another layer or model, or lacks its
    concept; one built by hand at a site its op does not apply at)."""
    for edit in edits:
        if not edit.enabled:
            continue
        spec = OPS.get(edit.op)
        if spec is not None and spec.before_run is not None:
            spec.before_run(edit, model)
