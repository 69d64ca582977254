"""Issue 52, item 8: a step `after_paint` schedules runs once the turn's drawing is painted and after the timers
that fell due during the paint (the bench's heartbeat, an animation). Qt posts a window's paint request at low
priority, behind queued calls: the step's 1 ms timer was started from one, before the paint, fell due during it
and ran first once it ended, so a paint and the next turn made one stall."""

from __future__ import annotations

import time

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QTimer
from PySide6.QtWidgets import QWidget

from inspector.gui.common.paint_turns import HOPS, after_paint


class SlowPaint(QWidget):
    def __init__(self, order: list[str]) -> None:
        super().__init__()
        self.order = order

    def paintEvent(self, event) -> None:
        self.order.append("paint")
        time.sleep(0.02)  # a paint of 20 ms: the 5 ms timer below falls due during it


def test_the_step_runs_after_the_paint_and_after_the_timers_due_during_it(qtbot):
    order: list[str] = []
    widget = SlowPaint(order)
    qtbot.addWidget(widget)
    widget.resize(40, 40)
    widget.show()
    qtbot.waitExposed(widget)
    qtbot.wait(30)

    def turn() -> None:
        order.clear()
        widget.update()
        QTimer.singleShot(5, widget, lambda: order.append("timer"))
        after_paint(widget, lambda: order.append("step"))

    QTimer.singleShot(0, widget, turn)
    qtbot.waitUntil(lambda: "step" in order, timeout=5000)
    assert order == ["paint", "timer", "step"]


def test_nothing_runs_once_its_owner_is_deleted(qtbot):
    ran: list[str] = []
    for hops_done in (False, True):  # deleted before its timer is started, and once it is started
        owner = QObject()
        after_paint(owner, lambda: ran.append("step"))
        if hops_done:
            for _ in range(HOPS):  # the posted events only (a timer runs in the event loop)
                QCoreApplication.sendPostedEvents()
            assert owner.findChildren(QTimer)
        shiboken6.delete(owner)
    qtbot.wait(30)
    assert ran == []
