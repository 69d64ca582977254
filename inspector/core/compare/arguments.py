"""What a diff's arguments are, checked without the models: which model is the second, and the threshold.
Torch-free, so that the CLI says a wrong one before torch is imported and the models load; `load_pair` and
`compare_results` check them by these rules."""

from __future__ import annotations

import math
import numbers

from ..common.arguments import shown_value
from ..common.errors import ArgumentTypeError, MismatchError


def second_model(source: str, against: str | None, against_model: str | None,
                 against_weights: str | None) -> tuple[str, str | None]:
    """The second model's source and weights: `source` with the weights file `against`, or `against_model`
    with `against_weights`; MismatchError when both forms or neither is given."""
    if against and (against_model or against_weights):
        raise MismatchError("Give the second model either as --against WEIGHTS (same source) or as "
                            "--against-model SOURCE [--against-weights W2], not both.")
    if not against and not against_model:
        raise MismatchError("diff needs a second model: --against WEIGHTS, or --against-model SOURCE.")
    return against_model or source, against if against else against_weights


def check_threshold(threshold: float) -> None:
    """MismatchError unless the relative L2 difference a layer may have before it diverges is a number >= 0
    (ArgumentTypeError when it is not a number at all: text, a list, an array, a tensor, True)."""
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real):
        raise ArgumentTypeError(f"The threshold must be a number >= 0, not {shown_value(threshold)}.")
    if threshold < 0 or not math.isfinite(threshold):
        raise MismatchError(f"The threshold must be a number >= 0, got {threshold}.")
