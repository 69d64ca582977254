"""Work split over event-loop turns, each painted before the next starts (the window answers between them)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import shiboken6
from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, QTimer

HOPS = 2  # posts behind the paint: twice, for a paint asked for from a call this turn queued (one hop late)


def after_paint(owner: QObject, step: Callable[[], None]) -> None:
    """`step()` in a later turn, once what this one drew is painted and the timers due by then (a heartbeat, an
    animation) have run. Qt posts a window's paint request at low priority, behind every call queued at normal
    priority (a zero-delay timer's call, or a 1 ms timer started from one, ran before the paint; the timer then
    fell due during the paint and ran at once after it, ahead of the timers due since): so a low-priority event
    is posted behind it, HOPS times, and only then is the step's zero-interval timer started. Nothing runs once
    `owner` is deleted."""
    global _behind
    if _behind is None:
        _behind = _Behind()
    _behind.post(owner, step, HOPS)


class _Behind(QObject):
    """Receives the low-priority events `after_paint` posts, in the order posted (one priority: first in, first out)."""

    def __init__(self) -> None:
        super().__init__()
        self.kind = QEvent.Type(QEvent.registerEventType())
        self.waiting: deque[tuple[QObject, Callable[[], None], int]] = deque()

    def post(self, owner: QObject, step: Callable[[], None], hops: int) -> None:
        self.waiting.append((owner, step, hops))
        QCoreApplication.postEvent(self, QEvent(self.kind), Qt.LowEventPriority.value)

    def event(self, event: QEvent) -> bool:
        if event.type() != self.kind:
            return super().event(event)
        owner, step, hops = self.waiting.popleft()
        if not shiboken6.isValid(owner):
            return True
        if hops > 1:
            self.post(owner, step, hops - 1)
            return True
        timer = QTimer(owner)  # a timer object (QTimer.singleShot(0) is a queued call, not a timer); owner's child
        timer.setSingleShot(True)
        timer.timeout.connect(step)
        timer.timeout.connect(timer.deleteLater)
        timer.start(0)
        return True


_behind: _Behind | None = None  # made on first use, in the GUI thread (no Qt object at import)


def settle_layout(passes: int = 3) -> None:
    """Lay out now what this turn changed (the layout requests it posted, and those that laying out posts in
    turn, `passes` deep), so that the paint closing the turn is at the final sizes: left to the event loop,
    the paint could come first, then the layout, then a second paint of everything that moved (a model
    loaded: the two panels painted three times, 30 ms in one turn)."""
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication

    for _ in range(passes):
        QApplication.sendPostedEvents(None, QEvent.LayoutRequest)
