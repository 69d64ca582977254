"""Ctrl-C, said once: what counts as an interrupt, and a SIGINT guard that raises only the first.

Standard library only: `python -m inspector` installs the guard before it imports anything else,
so a second Ctrl-C while the first unwinds an import (of torch, numpy, ...) is not a second traceback.
"""

from __future__ import annotations

import signal
import sys


def interrupted(exc: BaseException) -> bool:
    """`exc` comes from a Ctrl-C: Python wraps a KeyboardInterrupt raised while a class is made (a
    dataclass field's __set_name__ while torch imports) in a RuntimeError whose cause it is."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


class InterruptOnce:
    """While installed, Ctrl-C raises KeyboardInterrupt once; more of them while that unwinds are ignored
    (two within a few milliseconds interrupted the handling of the first).

    A KeyboardInterrupt that lands in code whose exceptions Python only reports (a weakref callback of
    importlib's module locks, a __del__) is swallowed rather than printed as "Exception ignored", and kept:
    the next Ctrl-C raises again, and `deliver()` raises it where the guarded work ends.
    """

    def __init__(self):
        self.raised = False
        self.swallowed = False
        self.previous = signal.signal(signal.SIGINT, self._on_sigint)
        self._previous_hook = sys.unraisablehook
        sys.unraisablehook = self._on_unraisable

    def _on_sigint(self, _signum, _frame):
        if not self.raised:
            self.raised = True
            raise KeyboardInterrupt

    def _on_unraisable(self, unraisable):
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            self._previous_hook(unraisable)
            return
        self.swallowed = True
        self.raised = False  # last: a Ctrl-C from here on raises where it can be caught

    def deliver(self) -> None:
        """Raise the Ctrl-C that Python swallowed while the guarded work ran, if one was."""
        if self.swallowed:
            self.swallowed = False
            raise KeyboardInterrupt

    def restore(self, handler=None) -> None:
        """Put back what was there before (or `handler` for SIGINT)."""
        signal.signal(signal.SIGINT, self.previous if handler is None else handler)
        if sys.unraisablehook == self._on_unraisable:
            sys.unraisablehook = self._previous_hook
