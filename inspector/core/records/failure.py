"""What went wrong, as a record the worker sends the window: one paragraph for people, and a
traceback only when the error was unexpected."""

from __future__ import annotations

import traceback
from dataclasses import dataclass

from ..common.errors import InspectorError, RunCancelled


@dataclass(frozen=True)
class Failure:
    """What went wrong, for people: `message` in one paragraph, `details` a traceback when unexpected."""

    message: str
    what: str = "run"  # load | run | statistics | attribution | engine | atlas
    kind: str = ""  # the error class, e.g. InputError
    run_id: int = 0
    cancelled: bool = False
    details: str = ""


def describe_error(exc: BaseException) -> str:
    if isinstance(exc, InspectorError):
        return str(exc)
    name = type(exc).__name__
    if "OutOfMemory" in name or "out of memory" in str(exc).lower():
        return ("The device ran out of memory. Tick fewer layers, use a smaller input, "
                "or switch to the CPU. The model is still loaded.")
    return f"Unexpected {name}: {exc}"


def sentence(text: str) -> str:
    """`text` ending as a sentence does, so that another can follow it ("... broken model. Still on ...")."""
    text = text.rstrip()
    return text if not text or text[-1] in ".!?:)" else text + "."


def failure(exc: BaseException, what: str, run_id: int = 0) -> Failure:
    """The record of `exc`. An unexpected error's traceback is its details; so is the traceback of what a
    model's own code raised (a RunError or ModelLoadError made from it), so the user can find the line."""
    if isinstance(exc, InspectorError):
        cause = exc.__cause__
        details = "" if cause is None or isinstance(cause, InspectorError) else "".join(
            traceback.format_exception(type(cause), cause, cause.__traceback__))
    else:
        details = traceback.format_exc()
    return Failure(describe_error(exc), what, type(exc).__name__, run_id, isinstance(exc, RunCancelled), details)
