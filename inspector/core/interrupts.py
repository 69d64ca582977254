"""Ctrl-C, said once: what counts as an interrupt, and a SIGINT handler that raises only the first.

Standard library only: `python -m inspector` installs the handler before it imports anything else,
so a second Ctrl-C while the first unwinds an import (of torch, numpy, ...) is not a second traceback.
"""

from __future__ import annotations

import signal


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


def interrupt_once():
    """Ctrl-C raises KeyboardInterrupt once; more of them while that unwinds are ignored (two within
    a few milliseconds interrupted the handling of the first). Returns the handler it replaced."""
    state = {"raised": False}

    def handler(_signum, _frame):
        if not state["raised"]:
            state["raised"] = True
            raise KeyboardInterrupt

    return signal.signal(signal.SIGINT, handler)
