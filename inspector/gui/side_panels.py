"""Small read-only views: predictions, the input as the model sees it, the hook log.

Predictions spell out NaN and Inf ("NaN", not "nan%") and say when the output holds them."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QImage, QPixmap
from PySide6.QtWidgets import (QHeaderView, QLabel, QPlainTextEdit, QTableWidget, QTableWidgetItem,
                               QVBoxLayout, QWidget)

from inspector.core.result import RunResult

from .number_format import fmt, nonfinite_text


def rgb_pixmap(rgb: np.ndarray, size: int = 224) -> QPixmap:
    rgb = np.ascontiguousarray(rgb)
    h, w, _ = rgb.shape
    image = QImage(rgb.data, w, h, 3 * w, QImage.Format_RGB888).copy()
    return QPixmap.fromImage(image).scaled(size, size, Qt.KeepAspectRatio, Qt.FastTransformation)


class PredictionsView(QTableWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(0, 3, parent)
        self.setHorizontalHeaderLabels(["Class", "Probability", "Logit"])
        self.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
        self.verticalHeader().setVisible(False)
        self.setEditTriggers(QTableWidget.NoEditTriggers)
        self.setMinimumHeight(170)

    def show_result(self, result: RunResult) -> None:
        rows = result.predictions
        self.setRowCount(len(rows))
        for r, p in enumerate(rows):
            self.setItem(r, 0, QTableWidgetItem(f"{p.label} ({p.index})"))
            self.setItem(r, 1, QTableWidgetItem(fmt(p.probability, ".2%")))
            self.setItem(r, 2, QTableWidgetItem(fmt(p.logit, ".3f")))
        self.setToolTip(self.nonfinite_note(result))

    @staticmethod
    def nonfinite_note(result: RunResult) -> str:
        """"The output holds NaN 2  Inf 1 of 10 values" when it does, else ""."""
        out = result.output
        if out is None or not np.issubdtype(np.asarray(out).dtype, np.floating):
            return ""
        nan, inf = int(np.isnan(out).sum()), int(np.isinf(out).sum())
        return f"The output holds {nonfinite_text(nan, inf)} of {out.size} values" if nan or inf else ""


class InputView(QWidget):
    """The input after preprocessing: what the model actually receives.

    Signals
    -------
    sigClicked(float, float): the picture was clicked at (fy, fx), fractions of its height and width.
    """

    sigClicked = Signal(float, float)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.picture = QLabel("no input yet")
        self.picture.setAlignment(Qt.AlignCenter)
        self.picture.setMinimumSize(160, 160)
        self.caption = QLabel(" ")
        self.caption.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.picture, 1)
        layout.addWidget(self.caption)

    def mousePressEvent(self, event) -> None:
        pixmap = self.picture.pixmap()
        if pixmap is None or pixmap.isNull():
            return super().mousePressEvent(event)
        point = self.picture.mapFrom(self, event.position().toPoint())
        left = (self.picture.width() - pixmap.width()) / 2
        top = (self.picture.height() - pixmap.height()) / 2
        fx, fy = (point.x() - left) / pixmap.width(), (point.y() - top) / pixmap.height()
        if 0 <= fx < 1 and 0 <= fy < 1:
            self.sigClicked.emit(fy, fx)

    def show_input(self, array: np.ndarray | None, preprocess) -> None:
        if array is None:
            return
        shape = "×".join(map(str, array.shape))
        if preprocess is not None and array.ndim == 4 and array.shape[1] == 3:
            self.picture.setPixmap(rgb_pixmap(preprocess.to_display(array)))
            self.caption.setText(f"as the model sees it: {shape}")
        else:
            self.picture.setText(np.array2string(array.reshape(-1)[:12], precision=3))
            self.caption.setText(f"tensor input {shape}")


class HookLog(QPlainTextEdit):
    MAX_LINES = 800
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setMaximumBlockCount(5000)

    def show_result(self, result: RunResult) -> None:
        if not result.events:
            return
        t0 = result.events[0].time
        events = result.events
        if len(events) > self.MAX_LINES:  # keep every warning and note; cut the routine lines
            routine = [e for e in events if e.kind in ("registered", "fired", "removed")]
            keep = set(map(id, routine[: self.MAX_LINES // 2] + routine[-self.MAX_LINES // 4:]))
            events = [e for e in events if id(e) in keep or e.kind not in ("registered", "fired", "removed")]
        lines = [f"{(e.time - t0) * 1000:8.1f} ms  {e.kind:<10} {e.what}" for e in events]
        if len(events) < len(result.events):
            lines.append(f"… {len(result.events) - len(events)} routine events not shown (of {len(result.events)})")
        self.setPlainText("\n".join(lines))

    def note(self, text: str) -> None:
        self.appendPlainText(text)
