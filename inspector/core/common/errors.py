"""The engine's own exceptions: each message is written for the person using the tool."""

from __future__ import annotations


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message: what a one-line error says of what the model raised."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else "(no message)"


class InspectorError(Exception):
    """Base of every error the engine raises on purpose."""


class ModelLoadError(InspectorError):
    """A model source or its weights could not be loaded."""


class UntrustedCodeError(ModelLoadError):
    """Loading would run code from a file, and the user has not said it may."""


class InputError(InspectorError):
    """An input file could not be turned into the model's input."""


class SpecError(InspectorError):
    """A layer pattern, site, key, edit or target could not be understood."""


class ArgumentTypeError(SpecError, TypeError):
    """An argument of the wrong kind given to the Python API (also a TypeError, as Python users expect)."""


class ArgumentValueError(SpecError, ValueError):
    """An argument of the right kind but out of range (also a ValueError)."""


class UnknownKeyError(SpecError, KeyError):
    """A key looked up in a result or a layer path in a layer tree that is not there (also a KeyError)."""

    __str__ = Exception.__str__  # the message as written, not quoted as KeyError would


class DeviceError(InspectorError):
    """The requested device is not available on this machine."""


class RunError(InspectorError):
    """The model raised while running, or backward could not be done."""


class RunCancelled(InspectorError):
    """The run was cancelled by the user."""

    def __init__(self, message: str = "Run cancelled.") -> None:
        super().__init__(message)


class MismatchError(InspectorError):
    """Two models (or their results) cannot be compared: different output shapes, devices, ..."""


class WriteError(InspectorError):
    """A file could not be written (the disk is full, a size limit, a read-only or foreign folder);
    nothing of it was left behind, and a file that was there before is untouched."""

    def __init__(self, message: str, path=None, errno: int | None = None) -> None:
        super().__init__(message)
        self.path, self.errno = path, errno


class AtlasError(InspectorError):
    """An atlas could not be built or read (its output folder belongs to another job, a file is not an atlas)."""
