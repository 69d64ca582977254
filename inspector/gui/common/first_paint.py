"""Run something once the window has first been painted (or after a fallback wait).

The app starts loading PyTorch once its window is on screen. Loading torch's shared libraries holds the
dynamic loader's lock for ~0.3-0.7 s, and the window's first paint needs that lock too (Qt resolves
symbols and loads plugins as it first draws): started together, the first paint stalled 58-70 ms
(179 ms once) on 2 cores; started after it, not at all.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QTimer


class AfterFirstPaint(QObject):
    """Call `callback` once: on the event-loop turn after `widget`'s first paint, or after `fallback_ms`
    when no paint comes (a minimised or hidden window), whichever is first."""

    def __init__(self, widget, callback, fallback_ms: int = 1000) -> None:
        super().__init__(widget)
        self._widget, self._callback = widget, callback
        self._fallback = QTimer(self, singleShot=True, interval=fallback_ms)
        self._fallback.timeout.connect(self._fire)
        self._fallback.start()
        widget.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Paint and self._callback is not None:
            self._fallback.stop()
            QTimer.singleShot(0, self, self._fire)  # after the whole window's paint
        return False

    def _fire(self) -> None:
        self._fallback.stop()
        self._widget.removeEventFilter(self)
        callback, self._callback = self._callback, None
        if callback is not None:
            callback()
