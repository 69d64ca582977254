"""Issue 41, item 10: Esc and Cancel are the same action, wherever the focus is. A menu closed with Esc left the
menu bar in keyboard mode, and the bar took the next Esc for itself: the run went on. (Esc inside a pass of an
attribution stopping within a module: tests/unit/attribution/test_cancel_within_a_pass.py.)"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget


def running(qtbot, window):
    return qtbot.waitSignal(window.state.sigPhase, timeout=10_000, check_params_cb=lambda p: p.startswith("Running"))


def test_esc_after_a_menu_closed_with_esc_cancels_the_run(ui, qtbot, open_window, slow_source, image_file):
    window = open_window(slow_source, image_file, ticks=ui.SLOW_TICKS)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5_000)
    bar = window.menuBar()
    with running(qtbot, window):
        window.state.set_target("3")
    bar.setFocus()
    QTest.keyClick(bar, Qt.Key_F, Qt.AltModifier)  # File opens
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is not None, timeout=5_000)
    QTest.keyClick(QApplication.activePopupWidget(), Qt.Key_Escape)  # and closes: the bar keeps the focus
    assert QApplication.activePopupWidget() is None
    assert QApplication.focusWidget() is bar and bar.activeAction() is not None  # in keyboard mode
    QTest.keyClick(bar, Qt.Key_Escape)
    assert ui.expect_failure(qtbot, window) == "Run cancelled."


def test_esc_cancels_from_every_widget_that_takes_the_focus(ui, qtbot, open_window, slow_source, image_file):
    window = open_window(slow_source, image_file, ticks=ui.SLOW_TICKS)
    window.activateWindow()
    window.state.sigBusy.disconnect(window.cancel_action.setEnabled)  # as while a run goes on, without one
    window.cancel_action.triggered.disconnect(window.state.cancel)
    window.cancel_action.setEnabled(True)
    pressed = []
    window.cancel_action.triggered.connect(lambda: pressed.append(QApplication.focusWidget()))
    tried, missed = 0, []
    for widget in window.findChildren(QWidget):
        if widget.focusPolicy() == Qt.NoFocus or not widget.isVisibleTo(window):
            continue
        widget.setFocus()
        focus = QApplication.focusWidget()
        before = len(pressed)
        QTest.keyClick(focus, Qt.Key_Escape)
        tried += 1
        if len(pressed) == before:
            missed.append(type(focus).__name__)
    assert tried > 20 and missed == []
