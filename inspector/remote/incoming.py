"""Frames into messages, on either side: a message is its JSON text frame and the binary frames it announces.

`Incoming.feed(frame)` returns what that frame completes: a `Message`, or an `Unreadable` (the one sentence to say
back, under the message's id when it could be read). A message whose frames are not all there when the next text
comes is unreadable; binary frames that belong to no readable text are dropped after one `Unreadable`, so every
bad message is said back once and the next good one is read as usual.
"""

from __future__ import annotations

from dataclasses import dataclass

from inspector.protocol.errors import ProtocolError
from inspector.protocol.messages import Message, array_of, build, read_text

NO_ID = "-"  # the id an error is said under when the message's own could not be read


@dataclass(frozen=True)
class Unreadable:
    id: str
    reason: str


class Incoming:
    """`max_bytes`: the most a message's array frames may hold together (None: no limit); past it the message is
    unreadable and the rest of its frames are dropped as they come, not kept."""

    def __init__(self, max_bytes: int | None = None) -> None:
        self.max_bytes = max_bytes
        self._envelope: dict | None = None
        self._frames: list = []
        self._held = 0
        self._due = 0
        self._dropping = False  # binary frames of a message already said to be unreadable

    def feed(self, frame: str | bytes) -> list[Message | Unreadable]:
        out: list[Message | Unreadable] = []
        if isinstance(frame, str):
            if self._envelope is not None:  # the one before never got all its frames
                out.append(Unreadable(self._envelope["id"], f"A message said {self._due} array frames and "
                                                            f"{len(self._frames)} came before the next message."))
                self._envelope = None
            self._dropping = False
            try:
                envelope, count = read_text(frame)
            except ProtocolError as exc:
                self._dropping = True
                out.append(Unreadable(_id_of(frame), str(exc)))
                return out
            except Exception as exc:  # noqa: BLE001 - whatever a hostile text provokes is said back, once
                self._dropping = True
                out.append(Unreadable(_id_of(frame), _unexpected(exc)))
                return out
            self._envelope, self._frames, self._due, self._held = envelope, [], count, 0
        elif self._envelope is None:
            if not self._dropping:
                self._dropping = True
                out.append(Unreadable(NO_ID, "An array frame came with no message before it: a message begins "
                                             "with its JSON text."))
            return out
        else:
            self._held += len(frame)
            if self.max_bytes is not None and self._held > self.max_bytes:
                out.append(Unreadable(self._envelope["id"], f"A message whose array frames hold more than "
                                                            f"{self.max_bytes:,} bytes: not read."))
                self._envelope, self._frames, self._dropping = None, [], True
                return out
            self._frames.append(frame)
        if self._envelope is not None and len(self._frames) == self._due:
            envelope, frames = self._envelope, self._frames
            self._envelope, self._frames = None, []
            try:
                arrays = [array_of(envelope, i, f) for i, f in enumerate(frames)]
                out.append(build(envelope, arrays))
            except ProtocolError as exc:
                out.append(Unreadable(envelope["id"], str(exc)))
            except Exception as exc:  # noqa: BLE001 - whatever a hostile message provokes is said back, once
                out.append(Unreadable(envelope["id"], _unexpected(exc)))
            self._dropping = False
        return out

    @property
    def waiting(self) -> bool:
        """A message's text came and some of its frames are still due."""
        return self._envelope is not None


def _unexpected(exc: Exception) -> str:
    text = str(exc).strip()
    return f"A message that cannot be read: {type(exc).__name__}" + (f": {text.splitlines()[0]}" if text else ".")


def _id_of(text: str) -> str:
    """The id of an unreadable message when its JSON has a usable one, so the error is said under it."""
    import json

    try:
        data = json.loads(text)
    except (ValueError, RecursionError, TypeError):
        return NO_ID
    found = data.get("id") if isinstance(data, dict) else None
    return found if isinstance(found, str) and 0 < len(found) <= 128 else NO_ID
