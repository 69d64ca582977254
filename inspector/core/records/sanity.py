"""The sanity checks' settings, torch-free, so the command line and the app can offer and check them before the
engine loads: their names, MPRT's modes and its threshold (the checks themselves: inspector.core.attribution.sanity)."""

from __future__ import annotations

from ..common.errors import SpecError

#: The sanity checks a command runs on a map beside its scores (`attribute --metrics mprt,random-logit`).
SANITY_CHECKS = ("mprt", "random-logit")
#: How MPRT re-initialises the layers: one more at each step from the logits down, or each one alone.
MPRT_MODES = ("cascading", "independent")
#: Spearman(|map|) with the model randomised below which a map "changes with the model".
MPRT_THRESHOLD = 0.5


def check_mode(mode: object) -> str:
    """`mode` when it is one of MPRT_MODES; a one-line SpecError otherwise."""
    if mode not in MPRT_MODES:
        raise SpecError(f"Unknown MPRT mode {mode!r}. Modes: {', '.join(MPRT_MODES)}.")
    return mode


def check_threshold(threshold: object) -> float:
    """`threshold` as a float when it is a number above 0 and at most 1; a SpecError otherwise. (A Spearman
    correlation with a random map is near 0, so a threshold at or below 0 would call almost no map one that changes
    with the model.)"""
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold <= 1:
        raise SpecError(f"The MPRT threshold is a Spearman correlation above 0 and at most 1, not {threshold!r}.")
    return float(threshold)
