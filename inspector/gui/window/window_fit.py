"""The first window's size and place: inside the available area of the screen it opens on, frame included.

At 1280x800 the window was made 1280x800 and the window manager's title bar came on top of that, so the
status bar (phase, busy bar) was off the screen until the window was maximised. Before a window is shown
the platform says nothing of its frame (and under plain X11 without a window manager, or offscreen, it
never does): room for a title bar and borders is then kept (`FRAME_GUESS`).
"""

from __future__ import annotations

from PySide6.QtCore import QMargins, QPoint, QRect, QSize

MIN_SIZE = (1100, 680)  # the smallest window the layout is made for (less only on a smaller screen)
WANTED = (1280, 800)  # the first window's size where the screen has room for it...
SHARE = 0.85  # ...or this share of a larger screen's available area
FRAME_GUESS = QMargins(4, 40, 4, 4)  # a title bar and borders, kept where the platform reports no frame


def first_geometry(available: QRect, frame: QMargins) -> QRect:
    """The window's geometry (its inside, without the frame) for a screen whose `available` area (without
    panels and docks) it opens in, with `frame` around it: WANTED or SHARE of the area, whichever is larger,
    no larger than the area less the frame, and centred in it frame included."""
    room = QSize(available.width() - frame.left() - frame.right(),
                 available.height() - frame.top() - frame.bottom())
    wanted = QSize(max(WANTED[0], int(available.width() * SHARE)), max(WANTED[1], int(available.height() * SHARE)))
    size = wanted.boundedTo(room)
    left = available.x() + (available.width() - size.width() - frame.left() - frame.right()) // 2
    top = available.y() + (available.height() - size.height() - frame.top() - frame.bottom()) // 2
    return QRect(QPoint(left + frame.left(), top + frame.top()), size)


def frame_margins(window) -> QMargins:
    """The frame the platform reports around `window`, or FRAME_GUESS where it reports none."""
    inside, outside = window.geometry(), window.frameGeometry()
    margins = QMargins(inside.left() - outside.left(), inside.top() - outside.top(),
                       outside.right() - inside.right(), outside.bottom() - inside.bottom())
    return margins if not margins.isNull() else FRAME_GUESS


def fit_to_screen(window) -> None:
    """Size and place `window` (a top-level widget) by `first_geometry` on its screen; its minimum size is
    MIN_SIZE, or less on a screen too small for that."""
    frame = frame_margins(window)
    rect = first_geometry(window.screen().availableGeometry(), frame)
    window.setMinimumSize(QSize(*MIN_SIZE).boundedTo(rect.size()))
    window.resize(rect.size())
    window.move(rect.topLeft() - QPoint(frame.left(), frame.top()))  # a window's position is its frame's
