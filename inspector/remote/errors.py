"""What the remote engine says went wrong, as the project's errors: one line each."""

from __future__ import annotations

from inspector.core.common.errors import InspectorError


class EngineError(InspectorError):
    """The remote engine answered a request with a failure (its message), an error, or not at all; or the
    server could not be reached, or speaks another protocol version."""

    def __init__(self, message: str, failure=None) -> None:
        super().__init__(message)
        self.failure = failure  # the Failure record the engine sent, when it sent one


class EngineCancelled(EngineError):
    """The request was cancelled: by the client, or replaced by a newer one in its lane."""


class RefusedRequest(InspectorError):
    """A request the server will not run: a path outside its data root, code it was not started to trust."""


class ServerSetupError(InspectorError):
    """The server cannot start as asked: a public address without TLS, a token file others can read, ..."""
