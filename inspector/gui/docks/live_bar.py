"""The bar above the input picture while a video or camera is the input: pause, step, snapshot, stop.

It shows what the state says (`AppState.sigLive`) and asks the state; the status bar gets the
frames per second.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget


def describe(status: dict) -> str:
    """"clip.mp4: frame 12 of 250, 23.4 frames/s, 3 dropped" (camera: no count)."""
    source = status["source"]
    name = source if source.startswith("camera:") else Path(source).name
    frame = status["frame"]
    where = "waiting for the first frame" if frame is None else f"frame {frame + 1}"
    if frame is not None and status["count"]:
        where += f" of {status['count']}"
    state = " (paused)" if status["paused"] else " (ended)" if status["ended"] else ""
    return f"{name}: {where}{state}"


def rate_text(status: dict) -> str:
    return f"{status['fps']:.1f} frames/s drawn, {status['dropped']} dropped"


class LiveBar(QWidget):
    """Signals
    -------
    sigPause(bool): pause (True) or play (False).
    sigStep(): one more frame (pauses).
    sigSnapshot(): the frame on screen becomes the input.
    sigStop(): close the video or camera.
    """

    sigPause = Signal(bool)
    sigStep = Signal()
    sigSnapshot = Signal()
    sigStop = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.pause_button = QToolButton(text="Pause")
        self.pause_button.setCheckable(True)
        self.pause_button.setToolTip("Pause or play the video")
        self.step_button = QToolButton(text="Step")
        self.step_button.setToolTip("Pause and show the next frame")
        self.snapshot_button = QToolButton(text="Snapshot")
        self.snapshot_button.setToolTip("Make the frame on screen the input (saved as a PNG)")
        self.stop_button = QToolButton(text="Stop")
        self.stop_button.setToolTip("Close the video; the last image input comes back")
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.rate = QLabel()
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        for button in (self.pause_button, self.step_button, self.snapshot_button, self.stop_button):
            row.addWidget(button)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(row)
        layout.addWidget(self.label)
        layout.addWidget(self.rate)
        self.pause_button.toggled.connect(self.sigPause.emit)
        self.step_button.clicked.connect(self.sigStep.emit)
        self.snapshot_button.clicked.connect(self.sigSnapshot.emit)
        self.stop_button.clicked.connect(self.sigStop.emit)
        self.rate.setAlignment(Qt.AlignLeft)
        self.hide()

    def show_status(self, status: dict | None) -> None:
        if status is None:
            self.hide()
            return
        self.pause_button.blockSignals(True)
        self.pause_button.setChecked(status["paused"])
        self.pause_button.setText("Play" if status["paused"] else "Pause")
        self.pause_button.blockSignals(False)
        self.label.setText(describe(status))
        self.label.setToolTip(status["source"])
        self.rate.setText(rate_text(status))
        self.show()
