"""Requests waiting for the engine, one per lane: the next request in a lane replaces the one waiting there.

One rule for every transport (the window's worker thread, the server): a lane holds at most one waiting
request, keyed by its id; `put` returns what it replaced (ended `cancelled` by the caller), and a lane may drop
other lanes' waiting requests too (a model's load drops the run waiting for the model before, `kinds.ALSO_DROPS`).
`take_all` empties the lanes in their serving order. Thread-safe.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from .kinds import ALSO_DROPS


class Lanes:
    def __init__(self, order: Iterable[str], also_drops: dict[str, tuple[str, ...]] | None = None) -> None:
        self.order = tuple(order)
        self._also = ALSO_DROPS if also_drops is None else also_drops
        self._waiting: dict[str, tuple[str, Any]] = {}
        self._lock = threading.Lock()

    def put(self, lane: str, key: str, request: Any) -> list[tuple[str, Any]]:
        """Wait `request` (id `key`) in `lane`; the (id, request) pairs it replaced."""
        if lane not in self.order:
            raise ValueError(f"no lane {lane!r}; the lanes are {', '.join(self.order)}")
        with self._lock:
            dropped = [self._waiting.pop(name) for name in (lane, *self._also.get(lane, ()))
                       if name in self._waiting]
            self._waiting[lane] = (key, request)
        return dropped

    def drop(self, lane: str) -> tuple[str, Any] | None:
        """Take `lane`'s waiting request away (its id and itself), if any."""
        with self._lock:
            return self._waiting.pop(lane, None)

    def cancel(self, key: str) -> Any | None:
        """Take the waiting request with id `key` away; None when none waits (it runs, ran or never came)."""
        with self._lock:
            for lane, (waiting, request) in list(self._waiting.items()):
                if waiting == key:
                    del self._waiting[lane]
                    return request
        return None

    def take_all(self) -> list[tuple[str, str, Any]]:
        """Every waiting (lane, id, request), in the lanes' serving order; the lanes are left empty."""
        with self._lock:
            taken = [(lane, *self._waiting.pop(lane)) for lane in self.order if lane in self._waiting]
        return taken

    def waiting(self, lane: str) -> bool:
        with self._lock:
            return lane in self._waiting

    def __len__(self) -> int:
        with self._lock:
            return len(self._waiting)
