"""Capture keys: `LAYER:SITE`, `LAYER:SITE#K` (K-th further call), `[i]` for one of several tensors,
and layer calls: `LAYER` or `LAYER#K` (one call of a module run several times per pass). The only
place keys and layer calls are built or split.

The same key names a capture in the API, the CLI, `.npz` exports and the UI.
Model-level keys are `input`, `input:grad` and `output`; a parameter's gradient is
`PARAM_PATH:grad` (`fc1.bias:grad`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from .arguments import need_text
from .errors import SpecError

Site = Literal["input", "output", "grad_output", "grad_input", "attention", "grad"]
#: `attention`: an attention module's softmax probabilities per head (see inspector.core.attention.site).
MODULE_SITES: tuple[str, ...] = ("input", "output", "grad_output", "grad_input", "attention")
GRAD_SITES: frozenset[str] = frozenset({"grad_output", "grad_input", "grad"})
#: What `--sites` accepts: the module sites plus `params` (every parameter's `:grad`).
SITE_CHOICES: tuple[str, ...] = (*MODULE_SITES, "params")


def parse_sites(sites) -> frozenset[str]:
    """The sites a run captures, from "output,grad_output" or a list: known ones only (torch-free, so the CLI
    says a wrong one before the model loads)."""
    from .arguments import need_texts

    if isinstance(sites, str):
        sites = [s.strip() for s in sites.split(",") if s.strip()]
        if not sites:
            raise SpecError(f"No sites given (the site list is empty). Valid sites: {', '.join(SITE_CHOICES)}.")
    found = frozenset(need_texts(sites, "sites", "output,grad_output"))
    unknown = sorted(found - set(SITE_CHOICES))
    if unknown:
        raise SpecError(f"Unknown site(s) {', '.join(unknown)}. Valid sites: {', '.join(SITE_CHOICES)}.")
    return found

_KEY = re.compile(r"^(?P<layer>[^:#\[\]]*?):(?P<site>[a-z_]+)(?:#(?P<call>\d+))?(?:\[(?P<index>\d+)\])?$")


@dataclass(frozen=True, order=True)
class Key:
    """One capture point. `layer` is a module path, a parameter path (site `grad`) or '' (the model)."""

    layer: str
    site: str
    call: int = 0
    index: int | None = None

    def __str__(self) -> str:
        if not self.layer:
            base = {"input": "input", "output": "output", "grad": "input:grad"}[self.site]
        else:
            base = f"{self.layer}:{self.site}"
        if self.call:
            base += f"#{self.call}"
        if self.index is not None:
            base += f"[{self.index}]"
        return base

    @property
    def is_grad(self) -> bool:
        return self.site in GRAD_SITES

    def layer_call(self) -> "LayerCall":
        """`layer` or `layer#K`: the call of the layer this key captures."""
        return LayerCall(self.layer, self.call)

    def same_tensor(self, other: "Key") -> bool:
        """`other` captures this key's tensor or its gradient (output and grad_output, input and grad_input of
        the same call and index): a channel and a position mean the same thing on both."""
        pair = {"output": "out", "grad_output": "out", "input": "in", "grad_input": "in"}
        return (self.layer, self.call, self.index) == (other.layer, other.call, other.index) and \
            pair.get(self.site, self.site) == pair.get(other.site, other.site)

    def site_key(self) -> "Key":
        """The key without call and tensor index: what an edit written without them targets."""
        return Key(self.layer, self.site)


@dataclass(frozen=True)
class LayerCall:
    """One call of a layer: `path` (the first, K=0) or `path#K` (the K-th further call)."""

    layer: str
    call: int = 0

    def __str__(self) -> str:
        return self.layer + (f"#{self.call}" if self.call else "")

    def key(self, site: str) -> Key:
        """The capture key of `site` at this call (`path:site#K`)."""
        return Key(self.layer, site, self.call)


def parse_layer_call(text: str) -> LayerCall:
    """`conv` -> LayerCall('conv', 0); `blocks.0.attn#1` -> LayerCall('blocks.0.attn', 1); a call
    that is not a whole number stays part of the name."""
    layer, sep, call = text.partition("#")
    return LayerCall(layer, int(call)) if sep and call.isdigit() else LayerCall(text)


def layer_of(text: str) -> str:
    """The layer of `path`, `path#K` or a capture key `path:site#K[i]` (its module path)."""
    return parse_layer_call(text.split(":", 1)[0].split("[", 1)[0]).layer


def parse_key(text: str) -> Key:
    """Parse `fc1:output`, `layer1.0.relu:output#1`, `fc1.bias:grad`, `input:grad`, `output`."""
    text = need_text(text, "A key").strip()
    if text in ("input", "output"):
        return Key("", text)
    if text == "input:grad":
        return Key("", "grad")
    match = _KEY.match(text)
    if not match or not match["layer"]:
        raise SpecError(
            f"Cannot read key {text!r}. Write LAYER:SITE (e.g. fc1:output, relu1:grad_input, "
            f"layer1.0.relu:output#1, fc1.bias:grad)."
        )
    site = match["site"]
    if site not in (*MODULE_SITES, "grad"):
        raise SpecError(f"Unknown site {site!r} in {text!r}. Valid sites: {', '.join((*MODULE_SITES, 'grad'))}.")
    call = int(match["call"]) if match["call"] else 0
    index = int(match["index"]) if match["index"] else None
    return Key(match["layer"], site, call, index)
