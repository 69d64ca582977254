"""Only what is seen crosses: a run's result sent with the arrays of the layers the window shows, the others
kept where the engine ran (their statistics travel, worked out where the tensors are) until they are asked for.

`seen_only` makes the result that is sent; `held_arrays` answers a later ask from the kept one; `with_arrays`
puts what came back into the result the window holds. Torch-free.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from inspector.core.engine.result import Capture, RunResult


def layer_of(name: str) -> str:
    """The layer a capture belongs to: `conv1:output` -> `conv1`; a parameter's gradient (`fc.weight:grad`) is
    its module's (`fc`), as the panels show it."""
    layer, _, site = name.rpartition(":")
    return layer.rpartition(".")[0] if site == "grad" else layer


def seen_only(result: RunResult, visible: tuple[str, ...] | None) -> RunResult:
    """`result` with the arrays of `visible`'s layers only (None: every layer); the input, output and extras
    stay; the other captures keep their statistics and are named in `held`."""
    if visible is None or result is None:
        return result
    shown = set(visible)
    captures, held = {}, []
    for name, capture in result.captures.items():
        if capture.array is None or layer_of(name) in shown:
            captures[name] = capture
        else:
            captures[name] = Capture(capture.key, capture.stats, None)
            held.append(name)
    return replace(result, captures=captures, held=tuple(held))


def seen_outcome(outcome, visible: tuple[str, ...] | None):
    """A RunOutcome as sent: its result and baseline `seen_only`; a second model's comparison whole."""
    if visible is None:
        return outcome
    return replace(outcome, result=seen_only(outcome.result, visible), baseline=seen_only(outcome.baseline, visible))


def held_arrays(result: RunResult, names) -> dict[str, np.ndarray]:
    """The arrays of `names` in the result the engine kept (names it does not hold are left out)."""
    return {name: result.captures[name].array for name in names
            if name in result.captures and result.captures[name].array is not None}


def with_arrays(result: RunResult, arrays: dict[str, np.ndarray]) -> None:
    """Put the `arrays` that came for held captures into `result` (in place, a key at a time, as statistics
    are: a thread reading meanwhile sees each capture either without its array or with it)."""
    for name, array in arrays.items():
        capture = result.captures.get(name)
        if capture is not None and name in result.held:
            result.captures[name] = Capture(capture.key, capture.stats, array)
    result.held = tuple(n for n in result.held if result.captures[n].array is None)
