"""Checks of what the public API is given: a wrong kind of argument is a SpecError naming it, never a
TypeError or AttributeError from deep inside (the contract the README promises)."""

from __future__ import annotations

import os
from typing import Any, Iterable

from .errors import SpecError


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def need_text(value: Any, what: str) -> str:
    """`value` when it is a string."""
    if not isinstance(value, str):
        raise SpecError(f"{what} must be text, not {_shown(value)}.")
    return value


def need_path(value: Any, what: str) -> str:
    """A string or path-like `value` as text."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise SpecError(f"{what} must be a file name or path, not {_shown(value)}.")
    return value


def need_texts(value: Any, what: str, example: str) -> list[str]:
    """A comma-separated string or a list of strings (`example` shows the expected form)."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",")]
    if value is None or not isinstance(value, Iterable) or isinstance(value, (bytes, dict)):
        raise SpecError(f"{what} must be text like {example!r} or a list of such names, not {_shown(value)}.")
    items = list(value)
    for item in items:
        if not isinstance(item, str):
            raise SpecError(f"{what} must hold names (text), not {_shown(item)}.")
    return items


def need_list(value: Any, what: str, example: str) -> list:
    """A list (or other iterable that is not text) of items; `example` shows one item."""
    if isinstance(value, (str, bytes, dict)) or value is None or not isinstance(value, Iterable):
        raise SpecError(f"{what} must be a list, e.g. [{example!r}], not {_shown(value)}.")
    return list(value)


def need_flag(value: Any, what: str) -> bool:
    if not isinstance(value, bool):
        raise SpecError(f"{what} must be True or False, not {_shown(value)}.")
    return value


def need_instance(value: Any, kind: type | tuple[type, ...], what: str, hint: str) -> Any:
    if not isinstance(value, kind):
        raise SpecError(f"{what} must be {hint}, not {_shown(value)}.")
    return value
