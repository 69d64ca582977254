"""The bar above the input picture while a folder is the input: previous / next, a slider, "i of N: path".

It only shows what the state says (`AppState.sigFolderShown`) and asks the state to step.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSlider, QToolButton, QVBoxLayout, QWidget


class FolderBar(QWidget):
    """Signals
    -------
    sigGoTo(int): the user picked image `index` (slider).
    sigStep(int): the user stepped by -1 or +1 (buttons).
    """

    sigGoTo = Signal(int)
    sigStep = Signal(int)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.previous = QToolButton(text="◀")
        self.previous.setToolTip("Previous image (Left / Page Up)")
        self.next = QToolButton(text="▶")
        self.next.setToolTip("Next image (Right / Page Down)")
        self.slider = QSlider(Qt.Horizontal)
        self.slider.setFocusPolicy(Qt.NoFocus)  # the window's Left/Right/PageUp/PageDown step
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.previous)
        row.addWidget(self.slider, 1)
        row.addWidget(self.next)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(row)
        layout.addWidget(self.label)
        self.previous.clicked.connect(lambda: self.sigStep.emit(-1))
        self.next.clicked.connect(lambda: self.sigStep.emit(1))
        self.slider.valueChanged.connect(self._on_slider)
        self.hide()

    def show_folder(self, folder) -> None:
        """Show `folder` (a FolderInput) at its index; None hides the bar."""
        if folder is None:
            self.hide()
            return
        self.slider.blockSignals(True)
        self.slider.setRange(0, len(folder) - 1)
        self.slider.setValue(folder.index)
        self.slider.blockSignals(False)
        self.previous.setEnabled(folder.index > 0)
        self.next.setEnabled(folder.index < len(folder) - 1)
        self.label.setText(folder.label())
        self.label.setToolTip(folder.path)
        self.show()

    def _on_slider(self, value: int) -> None:
        self.sigGoTo.emit(value)
