"""Records rebuilt from a message are held to the rules their text form is: an edit or a target read from the
wire must be one the command line would have read (`parse_edit`, `parse_target`), so a client cannot hand the
engine an op, argument or key that the parser refuses."""

from __future__ import annotations

from dataclasses import replace

from .errors import ProtocolError


def edit(value):
    from inspector.core.edits import parse_edit

    return _same(value, replace(parse_edit(str(value)), enabled=value.enabled), "edit")


def target(value):
    from inspector.core.target.objective import parse_target

    return _same(value, parse_target(str(value)), "target")


def _same(value, parsed, what: str):
    if parsed != value:
        raise ProtocolError(f"The {what} {value!r} is not what its text, {str(value)!r}, reads as: {parsed!r}.")
    return value


#: Record name -> its check.
CHECKS = {"Edit": edit, "Target": target}
