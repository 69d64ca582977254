"""What runs have shown about one model: which captures may share its memory.

On the CPU a capture can share memory with the tensor the model made instead of being copied,
once a run has shown that the model never changes that tensor in place after the capture (an
in-place ReLU or `out += identity` does). The knowledge belongs with whoever owns the model:
the app's `Workbench` holds one `Sharing` per loaded model, `capture()` one per `LoadedModel`,
and `run(..., sharing=...)` takes one explicitly (without it a run copies every capture).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field


@dataclass
class Sharing:
    """Capture keys seen in earlier runs of one model, and those it changed in place later."""

    seen: set[str] = field(default_factory=set)
    mutated: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def safe(self) -> frozenset[str]:
        """Keys a run may share: seen before and never changed after capture."""
        with self._lock:
            return frozenset(self.seen - self.mutated)

    def learn(self, seen: set[str], mutated: set[str], shared: frozenset[str]) -> set[str]:
        """Record one run; returns the keys it shared that the model changed after all."""
        with self._lock:
            self.seen |= seen
            self.mutated |= mutated
        return set(mutated & shared)

    def forget(self) -> None:
        with self._lock:
            self.seen.clear()
            self.mutated.clear()
