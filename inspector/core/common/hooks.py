"""Hooks registered as one: removed together, and none left behind when one of them cannot be registered."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from typing import Self


def together(handles: Iterable) -> ExitStack:
    """Registers the hooks `handles` yields (each a torch `RemovableHandle`, a context manager whose exit removes
    its hook) and returns an ExitStack whose `close()` or exit removes them all. If registering one raises, those
    already registered are removed before the error goes on."""
    with ExitStack() as hooks:
        for handle in handles:
            hooks.enter_context(handle)
        return hooks.pop_all()


class Hooked:
    """A context manager whose hooks are registered on entry, all or none (`together`), and removed on exit;
    a subclass yields them from `_register()`."""

    _hooks: ExitStack | None = None

    def __enter__(self) -> Self:
        self._hooks = together(self._register())
        return self

    def __exit__(self, *exc) -> None:
        if self._hooks is not None:
            self._hooks.close()
            self._hooks = None

    def _register(self) -> Iterator:
        raise NotImplementedError
