"""Work split over event-loop turns, each painted before the next starts (the window answers between them)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer


def after_paint(owner: QObject, step: Callable[[], None]) -> None:
    """`step()` in a later turn, once what this one drew is painted and the timers due by then (a heartbeat,
    an animation) have run: a zero-delay call is queued behind the paint, and it starts a 1 ms timer. Nothing
    runs once `owner` is deleted."""
    QTimer.singleShot(0, owner, lambda: QTimer.singleShot(1, owner, step))
