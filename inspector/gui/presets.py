"""Preset edits: the classic uses of gradient hooks, as lists of ordinary edits."""

from __future__ import annotations

from typing import Callable

from inspector.core.edits import Edit
from inspector.core.errors import SpecError
from inspector.core.keys import Key

RELU_TYPES = ("ReLU",)


def guided_backprop(layer_types: dict[str, str], _params: list[str], _layer: str, _k: float) -> list[Edit]:
    """Clamp every ReLU's grad_input at 0."""
    relus = [path for path, kind in layer_types.items() if kind in RELU_TYPES]
    if not relus:
        raise SpecError("Guided backprop: this model has no nn.ReLU modules.")
    return [Edit(Key(path, "grad_input"), "clamp", (("min", 0),)) for path in relus]


def zero_bias_grads(_layer_types: dict[str, str], params: list[str], _layer: str, _k: float) -> list[Edit]:
    """Zero the gradient of every bias parameter (shown where `params` is captured)."""
    names = [name for name in params if name.endswith(".bias") or name == "bias"]
    if not names:
        raise SpecError("Zero bias gradients: this model has no bias parameters.")
    return [Edit(Key(name, "grad"), "zero") for name in names]


def clamp_grad_output(layer_types: dict[str, str], _params: list[str], layer: str, _k: float) -> list[Edit]:
    """Clamp the chosen layer's grad_output at >= 0."""
    _need(layer, layer_types)
    return [Edit(Key(layer, "grad_output"), "clamp", (("min", 0),))]


def scale_gradient(layer_types: dict[str, str], _params: list[str], layer: str, k: float) -> list[Edit]:
    """Scale the gradient flowing out of the chosen layer by k."""
    _need(layer, layer_types)
    return [Edit(Key(layer, "grad_output"), "scale", (("k", k),))]


def _need(layer: str, layer_types: dict[str, str]) -> None:
    if layer not in layer_types:
        raise SpecError("Pick a layer first (the Layer field, or the module tree's context menu).")


PRESETS: dict[str, Callable[..., list[Edit]]] = {
    "Guided backprop (every ReLU grad_input ≥ 0)": guided_backprop,
    "Zero all bias gradients": zero_bias_grads,
    "Clamp layer grad_output ≥ 0": clamp_grad_output,
    "Scale layer gradient by k": scale_gradient,
}
