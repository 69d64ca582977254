"""`network-inspector serve`: the engine behind a WebSocket (the `websockets` asyncio server).

The token is checked on the upgrade request, before anything else (HTTP 401); a server already holding its
most connections answers 503. Each connection first gets `hello` (protocol version, package version, devices,
limits, what it serves). Every request is answered `accepted`, then `progress`/`partial` as they come, then one
of `result`, `failure` or `cancelled`, under its id; `devices` and `cancel` at once, the rest on the server's
one engine thread (`engine_thread`). A message that cannot be read gets one `error` event and the connection
stays open; so does a request past the rate limit.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from http import HTTPStatus

from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

from inspector.protocol import VERSION, kinds
from inspector.protocol.messages import Message, to_wire

from .config import ServerConfig
from .engine_thread import EngineThread, Session
from .errors import ServerSetupError
from .incoming import Incoming, Unreadable
from .jobs import SERVED, Jobs
from .limits import Backlog, RateLimit
from .tokens import bearer_matches

TERMINAL = ("result", "failure", "cancelled")
#: Every kind `hello` says this server answers.
ANSWERS = ("devices", "cancel", "drawn", "arrays", "list", "summary", *SERVED)


class EngineServer:
    def __init__(self, config: ServerConfig) -> None:
        from inspector.core.sources.devices import available_devices

        self.config = config
        self.devices = [[d.name, d.description] for d in available_devices()]
        self.engine = EngineThread(Jobs(config.root, config.trusted, config.device, config.ray))
        self.active = 0
        self.host, self.port = config.host, None

    # -- before the connection opens ---------------------------------------------------------------------
    def _process_request(self, connection, request):
        if not bearer_matches(request.headers.get("Authorization"), self.config.token):
            said = "only as the header Authorization: Bearer TOKEN, never in the address" \
                if "token" in request.path.lower() else "as the header Authorization: Bearer TOKEN"
            _log(f"refused a connection from {_peer(connection)}: no valid token")
            return connection.respond(HTTPStatus.UNAUTHORIZED, f"This server needs its token, {said}.\n")
        if self.active >= self.config.limits.max_connections:
            _log(f"refused a connection from {_peer(connection)}: {self.active} open already")
            return connection.respond(HTTPStatus.SERVICE_UNAVAILABLE,
                                      f"This server serves {self.config.limits.max_connections} clients at once.\n")
        return None

    # -- one connection ----------------------------------------------------------------------------------
    async def _handler(self, ws) -> None:
        if self.active >= self.config.limits.max_connections:
            await ws.close(1013, "too many connections")
            return
        self.active += 1
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()
        live: set[str] = set()
        backlog = Backlog(4 * self.config.limits.max_message)

        def deliver(parts: list, kind: str, key: str) -> None:  # on the event loop
            if kind in TERMINAL:
                live.discard(key)
            if not backlog.take(parts, queue.qsize()):
                if not backlog.closing:
                    backlog.closing = True
                    _log(f"closed the connection of {_peer(ws)}: it reads its answers too slowly")
                    asyncio.ensure_future(ws.close(1008, "the client reads its answers too slowly"))
                return
            queue.put_nowait(parts)

        def send(message: Message) -> None:  # from any thread: encoded there, sent in order from the loop
            parts = to_wire(message)
            try:
                loop.call_soon_threadsafe(deliver, parts, message.kind, message.id)
            except RuntimeError:  # the server has stopped
                pass

        session = Session(send)
        self.engine.attach(session)
        sender = asyncio.create_task(_send_all(ws, queue, backlog))
        try:
            send(Message("hello", "hello", self.hello()))
            incoming, rate = Incoming(self.config.limits.max_message), RateLimit(self.config.limits.rate)
            async for frame in ws:
                for item in incoming.feed(frame):
                    if isinstance(item, Unreadable):
                        send(Message("error", item.id, item.reason))
                    else:
                        self._request(session, item, rate, live)
        except ConnectionClosed:
            pass
        finally:
            self.engine.detach(session)
            self.active -= 1
            await _drain(queue, sender)

    def _request(self, session: Session, message: Message, rate: RateLimit, live: set[str]) -> None:
        kind, key, send = message.kind, message.id, session.send
        if kind not in kinds.REQUESTS:
            send(Message("error", key, f"A client sends requests ({', '.join(kinds.REQUESTS)}); {kind} is an "
                                       f"event, which only the server sends."))
            return
        if not rate.allow():
            send(Message("error", key, f"More than {self.config.limits.rate:g} requests a second on this "
                                       f"connection: {kind} {key} was not taken."))
            return
        if key in live:
            send(Message("error", key, f"Request id {key} is still in use on this connection: pick another."))
            return
        live.add(key)
        send(Message("accepted", key, kinds.lane(kind)))
        if kind == "devices":
            send(Message("result", key, self.devices))
        elif kind == "cancel":
            send(Message("result", key, self.engine.cancel(session, message.body)))
        elif kind == "drawn":
            send(Message("result", key, self.engine.drawn(session, message.body)))
        elif kind == "arrays":
            self._arrays(session, key, message.body)
        elif kind in ("list", "summary"):  # a folder of the data root listed, or a summary read, off the event loop
            from .listing import answer

            asyncio.get_running_loop().run_in_executor(None, answer, self.config, kind, key, message.body, send)
        elif kind in SERVED:
            self.engine.submit(session, kind, key, message.body)
        else:
            from inspector.core.records.failure import Failure

            send(Message("failure", key, Failure(f"This server does not serve {kind} requests yet; it serves "
                                                 f"{', '.join(ANSWERS)}.", "engine", "RefusedRequest")))

    @staticmethod
    def _arrays(session: Session, key: str, body: dict) -> None:
        """The arrays of the last run its client was not sent (only what is seen crosses), at once."""
        from inspector.core.records.failure import failure

        from .errors import RefusedRequest

        try:
            found = session.held(body["run"], body["names"])
        except RefusedRequest as exc:
            session.send(Message("failure", key, failure(exc, "run", body["run"])))
            return
        session.send(Message("result", key, found))

    def hello(self) -> dict:
        from inspector.core.storage.versions import versions

        c = self.config
        return {"protocol": VERSION, "version": versions(())["inspector"], "devices": self.devices,
                "device": c.device, "limits": c.limits.as_dict(), "serves": list(ANSWERS), "trusted": c.trusted,
                "served": self.engine.served}

    # -- the whole server --------------------------------------------------------------------------------
    async def serve(self, announce=print) -> None:
        """Serve until SIGINT or SIGTERM; `announce` is told the one line that says where."""
        c = self.config
        loop = asyncio.get_running_loop()
        stop = loop.create_future()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, lambda: stop.done() or stop.set_result(None))
            except (NotImplementedError, RuntimeError, ValueError):  # Windows, or not the main thread
                pass
        context = c.ssl_context()
        try:
            host = "127.0.0.1" if c.host.strip().lower() == "localhost" else c.host  # one address, one port
            listening = await serve(self._handler, host, c.port, process_request=self._process_request,
                                    max_size=c.limits.max_message, ssl=context, compression=None, server_header=None)
        except OSError as exc:
            raise ServerSetupError(f"Cannot listen on {c.host}:{c.port}: {exc.strerror or exc}.") from None
        self.engine.start()
        try:
            async with listening as server:
                self.host, self.port = host, server.sockets[0].getsockname()[1]
                announce(self.startup_line())
                await stop
        finally:
            self.engine.stop()

    def startup_line(self) -> str:
        c = self.config
        host = f"[{self.host}]" if ":" in self.host else self.host
        devices = ", ".join(name for name, _ in self.devices)
        root = f"data root {c.root}" + (" (the working folder: no --data-root)" if c.root_is_default else "")
        return (f"serving {c.scheme}://{host}:{self.port} on {c.device} (devices: {devices}); token in "
                f"{c.token_file}; {root}{'; trusted' if c.trusted else ''}")


async def _send_all(ws, queue: asyncio.Queue, backlog: Backlog) -> None:
    try:
        while True:
            parts = await queue.get()
            for part in parts:
                await ws.send(part)
            backlog.sent(parts)
    except ConnectionClosed:
        pass


async def _drain(queue: asyncio.Queue, sender: asyncio.Task) -> None:
    sender.cancel()
    try:
        await sender
    except (asyncio.CancelledError, ConnectionClosed):
        pass


def _peer(connection) -> str:
    address = getattr(connection, "remote_address", None)
    return f"{address[0]}:{address[1]}" if address else "?"


def _log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
