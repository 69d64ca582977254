"""Prev/next controls and "channels i-j of N" for a mosaic that shows one page of channels."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from inspector.core.pictures.mosaic import PAGE


class ChannelPager(QWidget):
    """Signals
    -------
    sigPageChanged(int): the user asked for the page starting at this channel.
    """

    sigPageChanged = Signal(int)

    def __init__(self, page_size: int = PAGE, parent=None) -> None:
        super().__init__(parent)
        self.page_size = page_size
        self.first, self.count, self.total = 0, 0, 0
        self.prev = QPushButton("◀ Prev")
        self.next = QPushButton("Next ▶")
        self.label = QLabel(" ")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.prev)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.next)
        self.prev.clicked.connect(lambda: self.sigPageChanged.emit(max(0, self.first - self.page_size)))
        self.next.clicked.connect(lambda: self.sigPageChanged.emit(self.first + self.page_size))
        self.setVisible(False)

    def set_range(self, first: int, count: int, total: int, noun: str = "channels") -> None:
        """Show `count` of `total` channels from `first`; hidden when one page holds them all."""
        self.first, self.count, self.total = first, count, total
        self.label.setText(f"{noun} {first}-{first + count - 1} of {total}")
        self.prev.setEnabled(first > 0)
        self.next.setEnabled(first + count < total)
        self.setVisible(total > count)
