"""What goes wrong reading a message: one sentence, said back as one `error` event."""

from __future__ import annotations

from inspector.core.common.errors import InspectorError


class ProtocolError(InspectorError):
    """A message that cannot be read: another protocol version, an unknown kind or record, a value the schema
    refuses, an array frame whose header does not match its bytes."""
