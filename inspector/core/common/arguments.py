"""Checks of what the public API is given: a wrong kind of argument is a SpecError naming it, never a
TypeError or AttributeError from deep inside (the contract docs/reference/python-api.md promises)."""

from __future__ import annotations

import functools
import inspect
import os
import typing
from typing import Any, Callable, Iterable, TypeVar

from .errors import ArgumentTypeError, ArgumentValueError

F = TypeVar("F", bound=Callable)


def shown_value(value: Any) -> str:
    """`value` for a one-line message: its repr on one line (an array's rows joined), at most 60 characters."""
    text = " ".join(repr(value).split())
    return text if len(text) <= 60 else text[:57] + "..."



def checked(func: F) -> F:
    """The public boundary: each argument is checked against the function's annotations (typeguard)
    before it runs; one of the wrong kind is an ArgumentTypeError (an InspectorError and a TypeError)
    that names the function, the argument and what it takes. Annotations that cannot be resolved
    (names only imported for type checkers) are not checked."""
    signature = inspect.signature(func)
    hints: dict[str, Any] | None = None

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nonlocal hints
        if hints is None:
            hints = _hints(func, signature)
        # typeguard (0.24 s with what it imports: unittest.mock, asyncio) is imported by the first checked
        # call, not by the app's window, which imports this module and calls none before the engine loads
        from typeguard import CollectionCheckStrategy, TypeCheckError, check_type

        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise ArgumentTypeError(f"{func.__name__}(): {exc}.") from None
        for name, value in bound.arguments.items():
            hint = hints.get(name)
            if hint is None or signature.parameters[name].kind in (inspect.Parameter.VAR_POSITIONAL,
                                                                    inspect.Parameter.VAR_KEYWORD):
                continue
            try:
                check_type(value, hint, collection_check_strategy=CollectionCheckStrategy.ALL_ITEMS)
            except TypeCheckError:
                raise ArgumentTypeError(f"{func.__name__}(): {name} must be {_kind(hint)}, "
                                        f"not {shown_value(value)}.") from None
        return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def _hints(func: Callable, signature: inspect.Signature) -> dict[str, Any]:
    try:
        return typing.get_type_hints(func)
    except Exception:  # noqa: BLE001 - one unresolvable name must not leave every argument unchecked
        found = {}
        module = inspect.getmodule(func)
        for name, parameter in signature.parameters.items():
            try:
                found[name] = typing.get_type_hints(
                    type("_", (), {"__annotations__": {name: parameter.annotation}}),
                    globalns=vars(module) if module else None)[name]
            except Exception:  # noqa: BLE001
                continue
        return found


def _kind(hint: Any) -> str:
    """`str or None`, `int`, `LoadedModel`: a type hint for people."""
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (typing.Union, getattr(__import__("types"), "UnionType", None)) and args:
        return " or ".join(_kind(a) for a in args)
    if hint is type(None):
        return "None"
    if typing.get_origin(hint) is not None:
        return getattr(typing.get_origin(hint), "__name__", str(hint)) + "[...]"
    return getattr(hint, "__name__", str(hint))


def need_text(value: Any, what: str) -> str:
    """`value` when it is a string."""
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{what} must be text, not {shown_value(value)}.")
    return value


def need_path(value: Any, what: str) -> str:
    """A string or path-like `value` as text; no file name holds a NUL byte."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{what} must be a file name or path, not {shown_value(value)}.")
    if "\x00" in value:
        raise ArgumentValueError(f"{what} must not hold a NUL byte (\\x00): {shown_value(value)}.")
    return value


def need_texts(value: Any, what: str, example: str) -> list[str]:
    """A comma-separated string or a list of strings (`example` shows the expected form)."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",")]
    if not _a_list(value):
        raise ArgumentTypeError(f"{what} must be text like {example!r} or a list of such names, "
                                f"not {shown_value(value)}.")
    items = list(value)
    for item in items:
        if not isinstance(item, str):
            raise ArgumentTypeError(f"{what} must hold names (text), not {shown_value(item)}.")
    return items


def need_list(value: Any, what: str, example: str) -> list:
    """A list (or other iterable that is not text) of items; `example` shows one item."""
    if not _a_list(value):
        raise ArgumentTypeError(f"{what} must be a list, e.g. [{example!r}], not {shown_value(value)}.")
    return list(value)


def _a_list(value: Any) -> bool:
    """Whether `value` holds items to go through: iterable, and not text, bytes, a dict, or one number held as a
    0-d array or tensor (np.array(3) and torch.tensor(3) are iterable by their type; iterating them raises)."""
    return (isinstance(value, Iterable) and not isinstance(value, (str, bytes, dict))
            and getattr(value, "ndim", None) != 0)


def need_flag(value: Any, what: str) -> bool:
    """`value` when it is True or False: a yes is a yes, not a truthy value (trust='false' is not a yes)."""
    if not isinstance(value, bool):
        raise ArgumentTypeError(f"{what} must be True or False, not {shown_value(value)}.")
    return value


def need_instance(value: Any, kind: type | tuple[type, ...], what: str, hint: str) -> Any:
    """`value` when it is a `kind` (`hint` says what that is, in words)."""
    if not isinstance(value, kind):
        raise ArgumentTypeError(f"{what} must be {hint}, not {shown_value(value)}.")
    return value


def need_function(value: Any, what: str) -> Any:
    """`value` when it is None or can be called (a callback: progress, phase)."""
    if value is not None and not callable(value):
        raise ArgumentTypeError(f"{what} must be a function or None, not {shown_value(value)}.")
    return value


def need_count(value: Any, what: str, low: int = 1, none: bool = False) -> int | None:
    """`value` when it is a whole number (not a bool) of at least `low` (or None, when `none`)."""
    if value is None and none:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentTypeError(f"{what} must be a whole number of at least {low}{' or None' if none else ''}, "
                                f"not {shown_value(value)}.")
    if value < low:
        raise ArgumentValueError(f"{what} must be a whole number of at least {low}{' or None' if none else ''}, "
                                 f"not {shown_value(value)}.")
    return value
