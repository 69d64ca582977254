"""Colour by: what the graph's nodes can be coloured by, one table (`COLOUR_BY`) read by the app's menu (Colour by,
in its order), the graph command's `--values` (`COMMAND_CHOICES`) and the drawing (`SHOWN`: one run's values, by
`draw.values.overlay_of`; the comparisons by `draw.compare`).

Each row says its name, the app's menu text, the numbers it needs (`family`: one run's values, edits on vs off, a
second model; None: nothing drawn) and, for one run's values, what the colour bar calls it, how it is read from a
node's `NodeValues` and whether it is a fraction. The command says both comparisons as `--values change` (with
--edit: edits on vs off, the app's `change`; with --against: a second model, the app's `divergence`).
Torch-free and Qt-free.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterator, Mapping

if TYPE_CHECKING:
    from .numbers import NodeValues

VALUES, EDITS, AGAINST = "values", "edits", "against"  # the numbers a choice needs (the worker's families)


@dataclass(frozen=True)
class Kind:
    """One choice of "Colour by": its name, its menu text, the family of numbers it needs (None: nothing drawn);
    for one run's values, what the colour bar calls it, how to read it from a node's values, whether a fraction."""

    name: str
    label: str
    family: str | None
    title: str = ""
    read: Callable[[NodeValues], float | None] | None = None
    fraction: bool = False


def _nonfinite(v: NodeValues) -> float:
    return (v.nan + v.inf) / v.count if v.count else 0.0


COLOUR_BY: dict[str, Kind] = {k.name: k for k in (
    Kind("none", "none", None),
    Kind("activation", "activation mean |x|", VALUES, "mean |x| of each node's output", lambda v: v.mean_abs),
    Kind("l2", "L2", VALUES, "L2 norm of each node's output", lambda v: v.l2),
    Kind("zeros", "zeros (dead units)", VALUES, "fraction of zeros in each node's output (dead units)",
         lambda v: v.zero_fraction, True),
    Kind("gradient", "gradient L2", VALUES, "gradient L2 at each node's output", lambda v: v.grad_l2),
    Kind("nan", "first NaN/Inf", VALUES, "fraction of NaN or Inf in each node's output", _nonfinite, True),
    Kind("change", "change with edits", EDITS),
    Kind("divergence", "divergence against", AGAINST),
)}

class _Rows(Mapping):
    """The table's rows of some families, NAME -> row, in the table's order: read from the table when asked, so a
    row added to it is here too."""

    def __init__(self, *families: str) -> None:
        self.families = families

    def __getitem__(self, name: str) -> Kind:
        kind = COLOUR_BY[name]
        if kind.family not in self.families:
            raise KeyError(name)
        return kind

    def __iter__(self) -> Iterator[str]:
        return (k.name for k in list(COLOUR_BY.values()) if k.family in self.families)

    def __len__(self) -> int:
        return sum(1 for _ in self)


#: one run's values, each coloured by its own number (`draw.values.overlay_of`): NAME -> its row.
SHOWN: Mapping[str, Kind] = _Rows(VALUES)

#: two runs compared, node by node: the command's word for both comparisons (edits on vs off, --against).
CHANGE = "change"

#: the graph command's `--values` choices, NAME -> row: one run's values, then `change`.
COMMAND_CHOICES: Mapping[str, Kind] = _Rows(VALUES, EDITS)
