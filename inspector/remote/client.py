"""A synchronous client of `network-inspector serve`: `EngineClient(url, token)`.

    with EngineClient("ws://127.0.0.1:8765") as engine:      # the token: given, $NETWORK_INSPECTOR_TOKEN, or the file
        engine.hello["devices"]                              # [[name, description], ...]
        info = engine.call("load", ModelRequest("demo"))     # a ModelInfo
        for event in engine.request("run", run_request):     # accepted, progress..., then result / failure / cancelled
            ...

`call` returns the result's value, or raises EngineError with the engine's own message (EngineCancelled when it
was cancelled). Events of other requests that arrive meanwhile are kept for them. A client with several requests
in flight at once (the app's) reads every event as it comes, whoever it is for, with `next_event(timeout)`.
"""

from __future__ import annotations

import itertools
import json
import time
from collections import deque
from collections.abc import Iterator

from websockets.exceptions import ConnectionClosed, InvalidStatus, InvalidURI, WebSocketException
from websockets.sync.client import connect

from inspector.protocol import VERSION
from inspector.protocol.messages import Message, to_wire

from .errors import EngineCancelled, EngineError
from .incoming import Incoming, Unreadable
from .tokens import client_token

TERMINAL = ("result", "failure", "cancelled", "error")


class EngineClient:
    def __init__(self, url: str, token: str | None = None, *, timeout: float = 60.0, ssl=None,
                 max_size: int | None = 2**31, token_file=None) -> None:
        self.url, self.timeout = url, timeout
        headers = {"Authorization": f"Bearer {client_token(token, token_file)}"}
        try:
            self._opened = connect(url, additional_headers=headers, open_timeout=min(timeout, 30), ssl=ssl,
                                   max_size=max_size, compression=None)
            self.ws = self._opened.__enter__()  # a context manager in websockets 17 (a connection before)
        except InvalidStatus as exc:
            said = (exc.response.body or b"").decode(errors="replace").strip().replace("\n", " ")
            raise EngineError(f"{url} refused the connection ({exc.response.status_code})"
                              f"{': ' + said if said else '.'}") from None
        except (OSError, TimeoutError, InvalidURI, WebSocketException) as exc:
            raise EngineError(f"Cannot reach the engine at {url}: {exc}") from None
        self._incoming = Incoming()
        self._kept: dict[str, deque] = {}
        self._ids = itertools.count(1)
        try:
            self.hello = self._hello()
        except BaseException:
            self.close()
            raise

    def _hello(self) -> dict:
        try:
            first = self.ws.recv(timeout=self.timeout)
        except (TimeoutError, ConnectionClosed) as exc:
            raise EngineError(f"{self.url} sent no hello: {exc}") from None
        try:
            said = json.loads(first).get("v") if isinstance(first, str) else None
        except (ValueError, AttributeError):
            said = None
        if said != VERSION:
            raise EngineError(f"The server at {self.url} speaks protocol version {said!r}; this client speaks "
                              f"version {VERSION}.")
        message = self._read(first)
        if message.kind != "hello" or not isinstance(message.body, dict):
            raise EngineError(f"{self.url} began with {message.kind}, not hello: not a Network Inspector engine.")
        return message.body

    def _read(self, frame) -> Message:
        """The message `frame` completes (reading its array frames), or EngineError."""
        while True:
            for item in self._incoming.feed(frame):
                if isinstance(item, Unreadable):
                    raise EngineError(f"The engine sent a message this client cannot read: {item.reason}")
                return item
            try:
                frame = self.ws.recv(timeout=self.timeout)
            except (TimeoutError, ConnectionClosed) as exc:
                raise EngineError(f"The engine stopped in the middle of a message: {exc}") from None

    def _next(self, deadline: float) -> Message:
        try:
            frame = self.ws.recv(timeout=max(0.0, deadline - time.monotonic()))
        except TimeoutError:
            raise EngineError(f"No answer from {self.url} within {self.timeout:g} s.") from None
        except ConnectionClosed as exc:
            raise EngineError(f"The engine at {self.url} closed the connection: {exc}") from None
        return self._read(frame)

    def next_event(self, timeout: float) -> Message | None:
        """The next event of any request (one kept by `events` first), or None when none comes within `timeout` s.
        EngineError, one line, when the connection closes or a message cannot be read."""
        for key, kept in list(self._kept.items()):
            if kept:
                message = kept.popleft()
                if not kept:
                    del self._kept[key]
                return message
        try:
            frame = self.ws.recv(timeout=max(0.0, timeout))
        except TimeoutError:
            return None
        except ConnectionClosed as exc:
            raise EngineError(f"The engine at {self.url} closed the connection: {exc}") from None
        return self._read(frame)

    # -- requests ----------------------------------------------------------------------------------------
    def send(self, kind: str, body=None, key: str | None = None) -> str:
        """Send request `kind` with `body`; its id (`key`, or the next of this client's)."""
        key = key or f"c{next(self._ids)}"
        try:
            for part in to_wire(Message(kind, key, body)):
                self.ws.send(part)
        except ConnectionClosed as exc:
            raise EngineError(f"The engine at {self.url} closed the connection: {exc}") from None
        return key

    def events(self, key: str, timeout: float | None = None) -> Iterator[Message]:
        """Request `key`'s events as they come, up to and including its last (result, failure, cancelled, or an
        error). Events of other requests are kept for them. EngineError when none comes within `timeout` s."""
        wait = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + wait
        while True:
            kept = self._kept.get(key)
            message = kept.popleft() if kept else None
            if message is None:
                message = self._next(deadline)
                if message.id != key:
                    self._kept.setdefault(message.id, deque()).append(message)
                    continue
            yield message
            if message.kind in TERMINAL:
                self._kept.pop(key, None)
                return
            deadline = time.monotonic() + wait  # progress keeps a long request alive

    def request(self, kind: str, body=None, timeout: float | None = None) -> Iterator[Message]:
        return self.events(self.send(kind, body), timeout)

    def call(self, kind: str, body=None, timeout: float | None = None):
        """The value of request `kind`'s result; EngineError with the engine's message otherwise."""
        return value_of(list(self.request(kind, body, timeout))[-1])

    def cancel(self, key: str) -> bool:
        """Stop request `key` (waiting or running); whether the engine found it."""
        return bool(self.call("cancel", key))

    def close(self) -> None:
        self._opened.__exit__(None, None, None)

    def __enter__(self) -> EngineClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def value_of(event: Message):
    """The value of a request's last event: its result's; EngineError for a failure or error, EngineCancelled."""
    if event.kind == "result":
        return event.body
    if event.kind == "failure":
        raise EngineError(event.body.message, event.body)
    if event.kind == "cancelled":
        raise EngineCancelled(f"Request {event.id} was cancelled: {event.body}")
    raise EngineError(f"The engine could not take request {event.id}: {event.body}")
