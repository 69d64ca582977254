"""Regression: PySide6 6.12.0 on Python 3.11 decremented None's refcount on every Qt call
returning None, so a pyqtgraph update loop aborted after a few hundred updates."""

import sys

from PySide6.QtCore import QObject


def test_none_returning_qt_calls_keep_none_refcount(qapp):
    obj = QObject()
    before = sys.getrefcount(None)
    for _ in range(10_000):
        assert obj.setObjectName("probe") is None
    after = sys.getrefcount(None)
    assert abs(after - before) < 100
