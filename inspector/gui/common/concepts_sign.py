"""Whether NMF can learn a layer's concepts, as far as the app knows before the build reads a folder: NMF needs a
non-negative layer (the build stops at the first negative value it meets), the sparse autoencoder takes any. The
Build concepts dialog offers a layer and method only where they work, and says why.

Known from the last run (its unedited values: a build runs the model without edits) where the layer was captured:
a negative value rules NMF out, none lets it be; otherwise from the module's type, whose output cannot be negative
(a ReLU, a sigmoid, a softmax); otherwise not known.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Module types whose output is never negative, whatever their input.
NON_NEGATIVE = frozenset({"ReLU", "ReLU6", "Sigmoid", "Softmax", "Softplus", "Hardsigmoid"})


@dataclass(frozen=True)
class LayerSign:
    """`nmf`: True where NMF can learn the layer, False where it cannot, None where that is not known; `why` says
    which, in words for the dialog."""

    nmf: bool | None
    why: str


def lowest(outcome, layer: str) -> float | None:
    """The lowest value of `layer`'s output in the last run without edits (None: not captured)."""
    if outcome is None:
        return None
    result = outcome.baseline if outcome.baseline is not None else outcome.result
    found = None
    for name, capture in result.captures.items():
        if name.partition("#")[0] != f"{layer}:output":  # every call of a shared module
            continue
        low = capture.stats.min if capture.stats is not None else \
            float(capture.array.min()) if capture.array is not None and capture.array.size else None
        if low is not None:
            found = low if found is None else min(found, low)
    return found


def layer_sign(layer: str, type_name: str, outcome) -> LayerSign:
    """What the app knows of `layer`'s sign (a module of type `type_name`) from `outcome`, the last run."""
    low = lowest(outcome, layer)
    if low is not None and low < 0:
        return LayerSign(False, f"{layer}'s output goes down to {low:.3g} in the last run: NMF needs a non-negative "
                                f"layer (after a ReLU); sae takes any layer.")
    if type_name in NON_NEGATIVE:
        return LayerSign(True, f"{layer} is a {type_name}: its output is never negative, NMF or sae.")
    if low is not None:
        return LayerSign(True, f"{layer}'s output has no negative value in the last run: NMF or sae (a negative "
                               f"value on an image of the folder would stop an NMF build).")
    return LayerSign(None, f"{layer} was not captured in the last run, so whether it goes negative is not known: "
                           f"sae takes any layer (tick it and run to know whether NMF can).")
