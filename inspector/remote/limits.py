"""What one server allows: the size of a message, requests per second per connection, connections at once, and
the answers a client may leave unread."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

MIB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    max_message: int = 64 * MIB  # bytes in one frame (websockets closes the connection past it: 1009)
    rate: float = 50.0  # requests per second per connection (a burst of as many); more: an `error` event each
    max_connections: int = 8  # clients at once; one more is answered HTTP 503

    def as_dict(self) -> dict:
        return asdict(self)


class RateLimit:
    """A token bucket: `rate` requests a second, bursts of up to `rate`."""

    def __init__(self, rate: float, clock=time.monotonic) -> None:
        self.rate = float(rate)
        self._clock = clock
        self._tokens = self.rate
        self._last = clock()

    def allow(self) -> bool:
        now = self._clock()
        self._tokens = min(self.rate, self._tokens + (now - self._last) * self.rate)
        self._last = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False


class Backlog:
    """The bytes of answers waiting for a client to read them: past `limit` (with more than one message waiting,
    so that one large result always goes) the client reads too slowly and its connection is closed."""

    def __init__(self, limit: int) -> None:
        self.limit, self.held, self.closing = limit, 0, False

    def take(self, parts: list, waiting: int) -> bool:
        if self.closing or (waiting and self.held > self.limit):
            return False
        self.held += sum(len(p) for p in parts)
        return True

    def sent(self, parts: list) -> None:
        self.held -= sum(len(p) for p in parts)
