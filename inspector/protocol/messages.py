"""One message of the protocol: a JSON text frame (and the binary frames of its arrays).

    {"v": 1, "kind": "run", "id": "r7", "body": <value>, "frames": 2}

`v` the protocol version, `kind` a request (`kinds.REQUESTS`) or an event (`kinds.EVENTS`), `id` the request's
(an event answers under the id of its request), `body` a value (`values`), `frames` how many array frames
follow this text (`frames`). Every text is checked by a JSON schema (`schemas`) before anything is built from it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import VERSION, frames, schemas, values
from .errors import ProtocolError

MAX_TEXT = 16 * 1024 * 1024  # a message's JSON, at most (its arrays travel beside it)


@dataclass(frozen=True)
class Message:
    kind: str
    id: str
    body: Any = None
    v: int = VERSION
    arrays: tuple = field(default=(), compare=False, repr=False)  # read: the arrays its frames brought


def to_wire(message: Message) -> list[str | bytes]:
    """The frames to send: the JSON text, then one binary frame per array in the body."""
    arrays: list[np.ndarray] = []
    body = values.encode(message.body, arrays)
    text = json.dumps({"v": message.v, "kind": message.kind, "id": message.id, "body": body,
                       "frames": len(arrays)}, separators=(",", ":"), allow_nan=False)
    return [text] + [frames.pack(message.id, i, a) for i, a in enumerate(arrays)]


def read_text(text: str | bytes) -> tuple[dict, int]:
    """The envelope of a text frame, checked (version, kind, schema), and how many array frames follow."""
    if len(text) > MAX_TEXT:
        raise ProtocolError(f"A message of {len(text):,} bytes; at most {MAX_TEXT:,} are read.")
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ProtocolError(f"A message that is not JSON: {exc}".split("\n")[0]) from None
    if isinstance(data, dict) and "v" in data and data["v"] != VERSION:
        raise ProtocolError(f"A message of protocol version {data['v']!r}; this side speaks version {VERSION}.")
    schemas.check_envelope(data)
    return data, data["frames"]


def build(envelope: dict, arrays: list[np.ndarray]) -> Message:
    """The Message of a checked envelope and the arrays its frames brought (in order)."""
    if len(arrays) != envelope["frames"]:
        raise ProtocolError(f"A message said {envelope['frames']} array frames and {len(arrays)} came.")
    body = values.decode(envelope["body"], arrays)
    schemas.check_body(envelope["kind"], body)
    return Message(envelope["kind"], envelope["id"], body, envelope["v"], tuple(arrays))


def from_wire(parts: list[str | bytes]) -> Message:
    """The Message of a text frame and its array frames (as `to_wire` made them)."""
    if not parts or not isinstance(parts[0], (str, bytes)):
        raise ProtocolError("A message begins with its JSON text.")
    envelope, count = read_text(parts[0])
    if len(parts) - 1 != count:
        raise ProtocolError(f"A message said {count} array frames and {len(parts) - 1} came.")
    return build(envelope, [array_of(envelope, i, part) for i, part in enumerate(parts[1:])])


def array_of(envelope: dict, index: int, frame: bytes) -> np.ndarray:
    """The array of `frame`, checked to be the `index`-th of the message `envelope`."""
    if not isinstance(frame, (bytes, bytearray)):
        raise ProtocolError("An array frame is binary.")
    message_id, at, array = frames.unpack(frame)
    if message_id != envelope["id"] or at != index:
        raise ProtocolError(f"Array frame {at} of message {message_id!r} came where frame {index} of "
                            f"{envelope['id']!r} was due.")
    return array


def _no_constant(name: str):
    raise ProtocolError(f"A message with a bare {name}: non-finite numbers travel as {{\"$float\": ...}}.")
