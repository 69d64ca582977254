"""The engine's own exceptions: each message is written for the person using the tool."""

from __future__ import annotations


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


class DeviceError(InspectorError):
    """The requested device is not available on this machine."""


class RunError(InspectorError):
    """The model raised while running, or backward could not be done."""


class RunCancelled(InspectorError):
    """The run was cancelled by the user."""

    def __init__(self, message: str = "Run cancelled.") -> None:
        super().__init__(message)


class AtlasError(InspectorError):
    """An atlas could not be built or read (its output folder belongs to another job, a file is not an atlas)."""
