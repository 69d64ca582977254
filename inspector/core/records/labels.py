"""A class's name as every view and command shows it (torch-free)."""

from __future__ import annotations

from collections.abc import Sequence


def label_name(index: int, labels: Sequence[str] | None) -> str:
    """The model's name for class `index`, or "class N" where it has none."""
    return labels[index] if labels and 0 <= index < len(labels) else f"class {index}"
