"""The Graph tab's overlay row: "Colour by" (what the nodes are coloured by), the colour bar (the map from the
lowest value drawn to the highest, its ticks in the value's units) and what the colours mean, or why there are
none.

Signals
-------
sigKind(str): a "Colour by" choice was picked (its name in `inspector.core.graph.values.colour_by.COLOUR_BY`).
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QLinearGradient, QPainter
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from inspector.core.graph.values.colour_by import COLOUR_BY

BAR_H = 10


class ColourStrip(QWidget):
    """A horizontal colour bar: `colours` left (low) to right (high), tick labels under it."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.bar = None  # a core ColourBar
        self.setFixedSize(190, BAR_H + 16)

    def set_bar(self, bar) -> None:
        self.bar = bar
        self.setToolTip(bar.title if bar is not None else "")
        self.update()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(190, BAR_H + 16)

    def paintEvent(self, _event) -> None:  # noqa: N802
        if self.bar is None:
            return
        p = QPainter(self)
        p.setRenderHint(QPainter.Antialiasing)
        margin = 14  # room for the end ticks' text
        rect = QRectF(margin, 1, self.width() - 2 * margin, BAR_H)
        gradient = QLinearGradient(rect.topLeft(), rect.topRight())
        colours = self.bar.colours
        for k, colour in enumerate(colours):
            gradient.setColorAt(k / max(len(colours) - 1, 1), QColor(*colour))
        p.fillRect(rect, gradient)
        p.setPen(QColor(90, 95, 105))
        p.drawRect(rect)
        font = p.font()
        font.setPixelSize(10)
        p.setFont(font)
        for at, text in self.bar.ticks:
            x = rect.left() + at * rect.width()
            p.drawLine(int(x), int(rect.bottom()), int(x), int(rect.bottom() + 2))
            width = p.fontMetrics().horizontalAdvance(text) + 2
            left = min(max(x - width / 2, 0), self.width() - width)
            p.drawText(QRectF(left, rect.bottom() + 2, width, 13), Qt.AlignCenter, text)
        p.end()


class OverlayBar(QWidget):
    sigKind = Signal(str)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.kind = QComboBox()
        for kind in COLOUR_BY.values():
            self.kind.addItem(kind.label, kind.name)
        self.kind.setToolTip("Colour the nodes by a value of the last run (worked out again after each run). "
                             "Change with edits: the Edits dock's edits on vs off. Divergence against: the second "
                             "model chosen in the Compare tab's Against.")
        self.kind.currentIndexChanged.connect(lambda _i: self.sigKind.emit(self.kind.currentData()))
        self.strip = ColourStrip()
        self.title = QLabel("")
        self.title.setWordWrap(True)
        self.title.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.title.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.legend = QLabel("")
        self.legend.setWordWrap(True)
        self.legend.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.legend.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.legend.setVisible(False)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Colour by:"))
        row.addWidget(self.kind)
        row.addWidget(self.strip)
        row.addWidget(self.title, 1)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(1)
        column.addLayout(row)
        column.addWidget(self.legend)
        self.show_bar(None)

    def chosen(self) -> str:
        return self.kind.currentData()

    def choose(self, name: str) -> None:
        self.kind.setCurrentIndex(self.kind.findData(name))

    def show_bar(self, bar, legend: tuple[str, ...] = ()) -> None:
        """The colour bar of what is drawn (None: none) and the overlay's legend lines."""
        self.strip.set_bar(bar)
        self.strip.setVisible(bar is not None)
        self.title.setStyleSheet("QLabel { color: #3a3f49; font-size: 11px; }")
        self.title.setText(bar.title.removeprefix("Colour: ") if bar is not None else "")
        self.legend.setStyleSheet("QLabel { color: #5a5f69; font-size: 11px; }")
        self.legend.setText(" ".join(legend))
        self.legend.setVisible(bool(legend))

    def say(self, text: str, failed: bool = False) -> None:
        """What is happening (working out the values) or, `failed`, why there are none; the bar goes."""
        self.strip.setVisible(False)
        self.legend.setVisible(False)
        self.title.setStyleSheet("QLabel { color: %s; font-size: 11px; }" % ("#b00020" if failed else "#5a5f69"))
        self.title.setText(text)
