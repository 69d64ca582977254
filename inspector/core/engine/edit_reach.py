"""Whether an edit can ever apply, known before the run from the layer tree (calls per forward, the
tensors a module returns); what only the run can tell is reported by the engine as a warning."""

from __future__ import annotations

from typing import Iterable

from ..edits import Edit
from ..common.errors import SpecError
from ..common.keys import Key
from ..sources.layers import LayerTree

_OUTPUT_SITES = ("output", "grad_output")


def check_edits_reach(edits: Iterable[Edit], tree: LayerTree) -> None:
    """Raise SpecError for an enabled edit whose key can never match: a parameter gradient with a call
    or part, or (when the tree was built with a forward) a module that never runs, a call `#K` past the
    module's calls per forward, or a part `[i]` of an output that has fewer tensors."""
    ran = any(layer.calls for layer in tree)
    paths = {layer.path: layer for layer in tree}
    for edit in edits:
        if not edit.enabled:
            continue
        key = edit.key
        if key.site == "grad":
            if key.call or key.index is not None:
                raise SpecError(f"Edit {edit}: a parameter gradient has no calls (#K) or parts ([i]); "
                                f"write {key.layer}:grad.")
            continue
        layer = paths.get(key.layer)
        if layer is None or not ran:
            continue  # an unknown layer is the engine's error; without a forward nothing more is known
        if not layer.calls:
            raise SpecError(f"Edit {edit}: {key.layer} never runs in a forward pass (its parent uses its weights "
                            f"directly, or it is not used), so the edit would change nothing.")
        if key.call >= layer.calls:
            calls = "once" if layer.calls == 1 else f"{layer.calls} times (#0 to #{layer.calls - 1})"
            raise SpecError(f"Edit {edit}: {key.layer} runs {calls} per forward pass, so #{key.call} never happens.")
        if key.index is not None and key.site in _OUTPUT_SITES:
            count = len(layer.output_shapes)
            if count <= 1:
                raise SpecError(f"Edit {edit}: {key.layer} returns one tensor, so there is no [{key.index}]; "
                                f"write {Key(key.layer, key.site, key.call)}.")
            if key.index >= count:
                raise SpecError(f"Edit {edit}: {key.layer} returns {count} tensors ([0] to [{count - 1}]), "
                                f"so there is no [{key.index}].")
