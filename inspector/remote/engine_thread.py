"""The server's one engine thread and the requests waiting for it, one set of lanes per connection.

Each connection (`Session`) keeps its own lanes (latest wins per lane, `inspector.protocol.lanes`): a request
replaces the one waiting in its lane, which ends `cancelled`. The thread takes the next request of each
connection in turn, so two clients share the engine fairly. `cancel` stops a waiting request, or the running
one through its Event (the engine checks it within one pass). A connection that closes has its waiting
requests dropped and its running one stopped.
"""

from __future__ import annotations

import threading

from inspector.protocol import kinds
from inspector.protocol.lanes import Lanes
from inspector.protocol.messages import Message

#: The lanes the engine thread serves, in the order it takes them.
LANES = ("catalogue", "model", "run", "attribution", "checks", "graph", "values", "concepts", "job")


class Session:
    """One connection's requests: `send(Message)` reaches its client from any thread."""

    def __init__(self, send) -> None:
        self.send = send
        self.lanes = Lanes(LANES)
        self.lock = threading.Lock()
        self.running: tuple[str, threading.Event] | None = None
        self.drawn = threading.Event()  # the running run's panels drawn by its client (or no longer waited for)
        self.closed = False
        self.kept = None  # the last run's whole outcome: the arrays its client was not sent, until asked for

    def keep(self, outcome) -> None:
        with self.lock:
            self.kept = outcome

    def held(self, run_id: int, names: list[str]) -> dict:
        """The arrays `names` of run `run_id`'s result (and of its baseline as `baseline/NAME`); RefusedRequest
        when that run is not the last one."""
        from inspector.protocol.seen import held_arrays

        from .errors import RefusedRequest

        with self.lock:
            kept = self.kept
        if kept is None or kept.run_id != run_id:
            last = "none" if kept is None else f"run {kept.run_id}"
            raise RefusedRequest(f"Run {run_id}'s arrays are no longer held: this connection keeps its last run's "
                                 f"({last}).")
        found = held_arrays(kept.result, [n for n in names if not n.startswith("baseline/")])
        if kept.baseline is not None:
            found.update({f"baseline/{n}": a for n, a in held_arrays(
                kept.baseline, [n[len("baseline/"):] for n in names if n.startswith("baseline/")]).items()})
        return found


class EngineThread:
    def __init__(self, jobs) -> None:
        self.jobs = jobs
        self.served = 0  # requests the engine has taken up since the server started
        self._cond = threading.Condition()
        self._sessions: list[Session] = []
        self._turn = 0
        self._stopping = False
        self.thread = threading.Thread(target=self._loop, name="inspector-engine", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def attach(self, session: Session) -> None:
        with self._cond:
            self._sessions.append(session)

    def detach(self, session: Session) -> None:
        """The connection closed: its waiting requests go, its running one is stopped."""
        with session.lock:
            session.closed = True
            session.lanes.take_all()
            if session.running is not None:
                session.running[1].set()
            session.drawn.set()
        with self._cond:
            if session in self._sessions:
                self._sessions.remove(session)

    def submit(self, session: Session, kind: str, key: str, body) -> None:
        with session.lock:
            replaced = session.lanes.put(kinds.lane(kind), key, (kind, body))
        for old, (was, _) in replaced:
            why = "a newer request in its lane" if kinds.lane(was) == kinds.lane(kind) else "a load of another model"
            session.send(Message("cancelled", old, f"Replaced by {key}, {why}."))
        with self._cond:
            self._cond.notify()

    def cancel(self, session: Session, key: str) -> bool:
        """Stop request `key` of `session`: False when it is neither waiting nor running."""
        with session.lock:
            if session.lanes.cancel(key) is not None:
                stopped = True
            elif session.running is not None and session.running[0] == key:
                session.running[1].set()
                session.drawn.set()
                return True
            else:
                return False
        if stopped:
            session.send(Message("cancelled", key, "Cancelled before it started."))
        return True

    def drawn(self, session: Session, key: str) -> bool:
        """Run `key`'s client has drawn its panels: its other statistics start now. False when it is not running."""
        with session.lock:
            if session.running is None or session.running[0] != key:
                return False
            session.drawn.set()
            return True

    def stop(self, timeout: float = 5.0) -> None:
        with self._cond:
            self._stopping = True
            sessions = list(self._sessions)
            self._cond.notify_all()
        for session in sessions:
            self.detach(session)
        if self.thread.is_alive():
            self.thread.join(timeout)

    def _take(self):
        """The next request, taking the connections in turn: (session, kind, key, body, cancel, drawn) or None."""
        count = len(self._sessions)
        for step in range(count):
            index = (self._turn + step) % count
            session = self._sessions[index]
            with session.lock:
                for lane in LANES:
                    got = session.lanes.drop(lane)
                    if got is not None:
                        key, (kind, body) = got
                        cancel = threading.Event()
                        session.running, session.drawn = (key, cancel), threading.Event()
                        self._turn = index + 1
                        return session, kind, key, body, cancel, session.drawn
        return None

    def _loop(self) -> None:
        while True:
            with self._cond:
                job = None
                while not self._stopping and (job := self._take()) is None:
                    self._cond.wait()
                if self._stopping:
                    return
                self.served += 1
            session, kind, key, body, cancel, drawn = job
            try:
                self.jobs.run(kind, key, body, cancel, session.send, session.keep, drawn)
            finally:
                with session.lock:
                    session.running = None
