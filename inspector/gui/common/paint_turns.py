"""Work split over event-loop turns, each painted before the next starts (the window answers between them)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer


def after_paint(owner: QObject, step: Callable[[], None]) -> None:
    """`step()` in a later turn, once what this one drew is painted and the timers due by then (a heartbeat,
    an animation) have run: a zero-delay call is queued behind the paint, and it starts a 1 ms timer. Nothing
    runs once `owner` is deleted."""
    QTimer.singleShot(0, owner, lambda: QTimer.singleShot(1, owner, step))


def settle_layout(passes: int = 3) -> None:
    """Lay out now what this turn changed (the layout requests it posted, and those that laying out posts in
    turn, `passes` deep), so that the paint closing the turn is at the final sizes: left to the event loop,
    the paint could come first, then the layout, then a second paint of everything that moved (a model
    loaded: the two panels painted three times, 30 ms in one turn)."""
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication

    for _ in range(passes):
        QApplication.sendPostedEvents(None, QEvent.LayoutRequest)
