"""A comparison's cells asked for one at a time, latest wins: Compare all's maps (`AnalysisState`) and Check these
maps' cards (`TrustState`). The cells wait in order; one is being made (`name`), its request's id is `pending`;
a stop drops the rest. Ids are negative, as every request of these lanes' (a run's are positive)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable


class Cells:
    def __init__(self) -> None:
        self._ids = itertools.count(-1, -1)
        self.pending = 0  # the id of the request last sent (0: none, or what it answers is dropped)
        self.name: str | None = None  # the cell being made
        self._rest: list[tuple[str, object]] = []

    @property
    def busy(self) -> bool:
        """A cell is being made."""
        return self.name is not None

    def start(self, cells: Iterable[tuple[str, object]]) -> None:
        """Cells (name, what to ask) to make in this order, none begun."""
        self._rest, self.name = list(cells), None

    def take(self):
        """The next cell's ask (its name now `name`), or None when none is left (`name` None)."""
        if not self._rest:
            self.name = None
            return None
        (self.name, ask), self._rest = self._rest[0], self._rest[1:]
        return ask

    def new_id(self) -> int:
        """The id of a request sent now (what the last one answers is dropped)."""
        self.pending = next(self._ids)
        return self.pending

    def answers(self, request_id: int) -> bool:
        """`request_id` is the cell being made's request."""
        return self.name is not None and request_id == self.pending

    def stop(self) -> None:
        """No cell is being made, none waits."""
        self._rest, self.name = [], None

    def forget(self) -> None:
        """Stop, and drop what the request in flight answers."""
        self.stop()
        self.pending = 0
