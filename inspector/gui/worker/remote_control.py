"""What the window says about the remote engine's requests in flight (`RemoteWorker`'s part): stop them (`cancel`,
Esc) and say that a run's panels are drawn (`drawn`: the engine's statistics of the other layers need not wait for
the cores any more). Both are put by the GUI thread and sent by the engine's thread on its next turn."""

from __future__ import annotations

from .remote_lanes import Flight


class RemoteControl:
    """Mixed into `RemoteWorker`: its `_lanes`, `_lock`, `_wake`, `_flights`, `_cancels`, `_cancel_all`, `_drawn`
    and `hello`."""

    # -- called from the GUI thread ----------------------------------------------------------
    def result_drawn(self) -> None:
        """The GUI has drawn the last result's panels: the engine's statistics of the rest may start (`drawn`)."""
        with self._lock:
            self._drawn = True
        self._wake.set()

    def cancel(self, request_id: str | None = None) -> bool:
        """As `Worker.cancel`: no id (Esc) drops the waiting run and stops everything in flight; an id drops that
        request if it waits, or stops it on the server if it is in flight."""
        if request_id is None:
            self._lanes.drop("run")
            with self._lock:
                self._cancel_all = True
            self._wake.set()
            return True
        if self._lanes.cancel(request_id) is not None:
            return True
        with self._lock:
            if request_id not in {f.key for f in self._flights.values()}:
                return False
            self._cancels.append(request_id)
        self._wake.set()
        return True

    # -- on the engine's thread ----------------------------------------------------------------
    def _send_cancels(self, client) -> None:
        with self._lock:
            everything, self._cancel_all = self._cancel_all, False
            asked, self._cancels = set(self._cancels), []
        for server_key, flight in list(self._flights.items()):
            if (everything or flight.key in asked) and not flight.stopping:
                self._stop_flight(client, server_key, flight)

    def _send_drawn(self, client) -> None:
        """The run whose partial is on screen: its statistics need not wait for the cores any more (a server
        that does not read `drawn` starts them at once anyway)."""
        with self._lock:
            drawn, self._drawn = self._drawn, False
        if not drawn or "drawn" not in (self.hello or {}).get("serves", ()):
            return
        for server_key, flight in self._flights.items():
            if flight.lane == "run" and flight.partial is not None and not flight.stopping:
                client.send("drawn", server_key, key=f"drawn-{server_key}")  # its answer is read and let go

    def _stop_flight(self, client, server_key: str, flight: Flight) -> None:
        flight.stopping = True
        client.send("cancel", server_key, key=f"stop-{server_key}")  # its answer is read and let go
