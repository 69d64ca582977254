"""The remote engine's events, read on a thread of their own: `EventReader`.

`RemoteWorker`'s thread sends requests and hears events. When it waited for the next event with a timeout and only
then looked at the lanes, a request the window put waited for that timeout (50 ms: 21 ms on median, a run's
overhead). With the reading here, the worker's thread waits on one Event that both a request put and an event read
set, and answers whichever came, at once. The messages are read (and their arrays decoded) here, off the thread
that sends.
"""

from __future__ import annotations

import threading
from collections import deque

#: How long one read waits before it reads again (s): the connection's close ends a read at once; this only bounds
#: a read of a connection nobody closes.
READ_S = 1.0


class EventReader:
    """Reads `client`'s events (`EngineClient.next_event`) until the connection ends; each event read sets `wake`.
    The worker's thread `take`s them; the reading's error (a lost connection, a message that cannot be read) is
    raised by `take` once every event read before it has been taken."""

    def __init__(self, client, wake: threading.Event) -> None:
        self._client, self._wake = client, wake
        self._events: deque = deque()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._read, name="inspector-remote-reader", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            while True:
                message = self._client.next_event(READ_S)
                if message is not None:
                    self._events.append(message)
                    self._wake.set()
        except BaseException as exc:  # noqa: BLE001 - the connection lost or closed: said to the worker's thread
            self._error = exc
            self._wake.set()

    def take(self) -> list:
        """The events read since the last take, in the order they came; the reading's error when none are left."""
        taken = []
        while self._events:
            taken.append(self._events.popleft())
        if not taken and self._error is not None:
            raise self._error
        return taken

    def join(self, timeout: float = 5.0) -> None:
        """Wait for the reading to end (the client closed)."""
        self._thread.join(timeout)
