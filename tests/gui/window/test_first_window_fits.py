"""Issue 41, item 14: the first window fits the screen it opens on, frame included. At 1280x800 it was made
1280x800 and the title bar came on top: the status bar (phase, busy bar) was off the screen until maximised."""

from __future__ import annotations

from PySide6.QtCore import QMargins, QRect

from inspector.gui.window.window_fit import FRAME_GUESS, MIN_SIZE, first_geometry


def _framed(rect: QRect, frame: QMargins) -> QRect:
    return rect.marginsAdded(frame)


def test_a_1280x800_screen_keeps_room_for_the_title_bar():
    available = QRect(0, 0, 1280, 800)
    rect = first_geometry(available, FRAME_GUESS)  # no frame reported: 4 px borders, a 40 px title bar kept
    assert rect == QRect(4, 40, 1272, 756)  # 1280 - 4 - 4 wide, 800 - 40 - 4 high
    assert available.contains(_framed(rect, FRAME_GUESS))


def test_a_panel_and_a_reported_frame_are_left_out():
    available = QRect(0, 27, 1280, 773)  # a 27 px top panel
    frame = QMargins(0, 37, 0, 0)  # what a window manager reported
    rect = first_geometry(available, frame)
    assert rect == QRect(0, 64, 1280, 736)  # 773 - 37 high, just under the panel and the title bar
    assert available.contains(_framed(rect, frame))


def test_a_1920x1080_screen_gets_a_larger_window_in_its_middle():
    rect = first_geometry(QRect(0, 0, 1920, 1080), FRAME_GUESS)
    # 85% of the screen: 1632 x 918; its frame 1640 x 962 centred: (1920 - 1640) / 2 = 140, (1080 - 962) / 2 = 59
    assert rect == QRect(144, 99, 1632, 918)


def test_the_first_window_and_its_status_bar_are_on_the_screen(qtbot, window):
    """On the tests' 1280x800 screen (tests/conftest.py) the window shown fits, its frame included, and so does
    its status bar (offscreen reports a 2 px frame once the window is shown)."""
    available = window.screen().availableGeometry()
    assert available == QRect(0, 0, 1280, 800)
    frame = window.frameGeometry()
    assert available.contains(frame), (frame, available)
    bar = window.statusBar()
    bottom_left = bar.mapToGlobal(bar.rect().bottomLeft())
    assert bar.isVisible() and available.contains(bottom_left)
    assert window.minimumSize().toTuple() == MIN_SIZE  # the screen has room for it
    window.resize(1600, 1000)  # larger than the screen: View > Reset layout brings it back inside
    window.reset_layout()
    assert available.contains(window.frameGeometry())


def test_a_screen_under_the_minimum_size_still_holds_the_whole_window():
    rect = first_geometry(QRect(0, 0, 1024, 600), FRAME_GUESS)
    assert rect == QRect(4, 40, 1016, 556)  # under MIN_SIZE (1100 x 680): fit_to_screen lowers the minimum to it
