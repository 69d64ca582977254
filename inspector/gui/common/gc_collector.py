"""Python's cyclic garbage collection, run on the GUI thread only, and kept short.

Automatic collection runs in whichever thread happens to allocate. On the worker (or an
autograd thread running a hook) it can free garbage that holds Qt widgets, such as
pyqtgraph's parentless menus, destroying them off the GUI thread; that deadlocked
against Shiboken's main-thread deletions. So automatic collection is off and a GUI
timer collects with the usual thresholds.

A full collection walks every tracked object: ~190 ms once torch, torchvision and the app
are imported (~390k objects), a stall the user sees. What modules create at import lives
as long as the process, so `freeze_imports()` moves it out of the collector's reach
(`gc.freeze()`) whenever new modules were imported; a full collection then takes well under
a millisecond.
"""

from __future__ import annotations

import gc
import sys

from PySide6.QtCore import QTimer

_frozen_at = 0  # len(sys.modules) at the last freeze


def freeze_imports() -> bool:
    """Freeze what exists now if modules were imported since the last freeze (GUI thread)."""
    global _frozen_at
    if len(sys.modules) <= _frozen_at:
        return False
    # The youngest garbage is freed, not frozen. Not the older generations: a full collection walked
    # every object (~100 ms on the GUI thread each time a model brought new modules), and generation 1,
    # where everything that survived the worker building resnet50 waits, took 71 ms to find nothing
    # unreachable (0 objects, measured at both freezes of a start-up then resnet50).
    gc.collect(0)
    gc.freeze()
    _frozen_at = len(sys.modules)
    return True


class GuiThreadCollector:
    """Collect on a GUI timer while workers exist; create and stop on the GUI thread."""

    _running = 0
    _was_enabled = True

    def __init__(self, interval_ms: int = 250, importing_ms: int = 50) -> None:
        self.interval_ms, self.importing_ms = interval_ms, importing_ms
        self.timer = QTimer(interval=interval_ms)
        self.timer.timeout.connect(self.collect)
        cls = GuiThreadCollector
        if cls._running == 0:
            cls._was_enabled = gc.isenabled()
            gc.disable()
        cls._running += 1
        self.timer.start()

    def collect(self) -> None:
        """One turn. While modules are being imported (the worker loading torch or a model's library),
        only the youngest generation is collected and what survives is frozen, every `importing_ms`:
        a generation 1 collection then walked everything imported so far (94-118 ms on the GUI thread
        at each start-up), and a generation 0 one every 250 ms held 20-43 ms of new objects."""
        importing = freeze_imports()
        self.timer.setInterval(self.importing_ms if importing else self.interval_ms)
        if importing:
            return
        (t0, t1, t2), (c0, c1, c2) = gc.get_threshold(), gc.get_count()
        if t0 and c0 > t0:
            gc.collect(2 if c2 > t2 else 1 if c1 > t1 else 0)

    def stop(self) -> None:
        if not self.timer.isActive():
            return
        self.timer.stop()
        cls = GuiThreadCollector
        cls._running -= 1
        if cls._running == 0 and cls._was_enabled:
            gc.enable()
