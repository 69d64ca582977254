"""Preset edits: the classic uses of gradient hooks, written as ordinary edits.

Each preset takes the loaded model's layer types and parameter names, the layer it acts
on and a factor, and returns edits; one definition for the app, the API and the CLI.
"""

from __future__ import annotations

from typing import Callable

from ..common.errors import SpecError
from ..common.keys import Key
from .guided import GUIDED_TYPES, guided_edits, split_guided
from .ops import Edit


def guided_backprop(layer_types: dict[str, str], _params, _layer: str, _k: float) -> list[Edit]:
    """guided() on every activation module's grad_input (exact at nn.ReLU, approximated at the
    rectifiers of `inspector.core.edits.guided`): the same edits as the guided attribution method."""
    exact, approximated = split_guided((path, (kind,)) for path, kind in layer_types.items())
    if not exact + approximated:
        raise SpecError(f"Guided backprop: this model has none of the modules the guided rule acts on "
                        f"(nn.{', nn.'.join(GUIDED_TYPES)}).")
    return list(guided_edits(exact, approximated))


def zero_bias_grads(_layer_types: dict[str, str], params, _layer: str, _k: float) -> list[Edit]:
    """Zero the gradient of every bias parameter (shown where `params` is captured)."""
    names = [name for name in params if name.endswith(".bias") or name == "bias"]
    if not names:
        raise SpecError("Zero bias gradients: this model has no bias parameters.")
    return [Edit(Key(name, "grad"), "zero") for name in names]


def clamp_grad_output(layer_types: dict[str, str], _params, layer: str, _k: float) -> list[Edit]:
    """Clamp the chosen layer's grad_output at >= 0."""
    _need(layer, layer_types)
    return [Edit(Key(layer, "grad_output"), "clamp", (("min", 0),))]


def scale_gradient(layer_types: dict[str, str], _params, layer: str, k: float) -> list[Edit]:
    """Scale the gradient flowing out of the chosen layer by k."""
    _need(layer, layer_types)
    return [Edit(Key(layer, "grad_output"), "scale", (("k", k),))]


def _need(layer: str, layer_types: dict[str, str]) -> None:
    if not layer:
        raise SpecError("Pick a layer first: select one in the Layer tab or the module tree.")
    if layer not in layer_types:
        raise SpecError(f"No layer named {layer!r} in this model.")


#: name -> (function, whether it acts on one chosen layer)
PRESETS: dict[str, tuple[Callable[..., list[Edit]], bool]] = {
    "Guided backprop (every ReLU, GELU, SiLU… grad_input ≥ 0)": (guided_backprop, False),
    "Zero all bias gradients": (zero_bias_grads, False),
    "Clamp layer grad_output ≥ 0": (clamp_grad_output, True),
    "Scale layer gradient by k": (scale_gradient, True),
}
