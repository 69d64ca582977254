"""The guided rule's reach: which activation modules get `guided()` at their grad_input.

One definition for the Guided backprop preset (app, API, CLI edits) and the guided attribution
methods. At an nn.ReLU the rule is exact: its own backward zeroes where the input was <= 0 and
guided() keeps positive gradients. The others only get "positive gradients only" on top of their
own backward (an approximation the attribution reports). Torch-free: types are named as in
`torch.nn`, and a module counts by its class or a base class of that name.
"""

from __future__ import annotations

from typing import Iterable

from ..common.keys import Key
from .ops import Edit

#: Where the guided rule is exact.
EXACT_TYPES: tuple[str, ...] = ("ReLU",)
#: Where it is an approximation (a smooth or leaky rectifier's own backward stays).
APPROXIMATED_TYPES: tuple[str, ...] = ("ReLU6", "SiLU", "GELU", "Hardswish", "LeakyReLU", "ELU", "Mish")
GUIDED_TYPES: tuple[str, ...] = EXACT_TYPES + APPROXIMATED_TYPES


def split_guided(layers: Iterable[tuple[str, Iterable[str]]]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(exact, approximated) paths among `layers`: (path, the names of its class and base classes)
    in model order. A class that is (or derives from) ReLU is exact, even if it also derives from
    an approximated type."""
    exact, approximated = [], []
    for path, names in layers:
        names = set(names)
        if names & set(EXACT_TYPES):
            exact.append(path)
        elif names & set(APPROXIMATED_TYPES):
            approximated.append(path)
    return tuple(exact), tuple(approximated)


def guided_edits(exact: Iterable[str], approximated: Iterable[str]) -> tuple[Edit, ...]:
    """`path:grad_input=guided()` on every exact, then every approximated, activation module."""
    return tuple(Edit(Key(path, "grad_input"), "guided") for path in (*exact, *approximated))


def approximation_note(approximated: Iterable[str], types: Iterable[str] = ()) -> str:
    """What the guided rule did where it is not exact, in words: for the CLI, the app's caption and the
    preset's message ("" when it was exact everywhere)."""
    approximated = tuple(approximated)
    if not approximated:
        return ""
    kinds = sorted(set(types)) or list(APPROXIMATED_TYPES)
    return (f"guided rule approximated at {len(approximated)} non-ReLU activation(s) ({', '.join(kinds)}): their "
            f"own backward is kept and only positive gradients pass; exact at nn.ReLU only (as captum's "
            f"GuidedBackprop, which changes nn.ReLU alone)")
