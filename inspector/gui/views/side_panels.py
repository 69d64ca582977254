"""Small read-only views: predictions, the input as the model sees it, the hook log.

Predictions spell out NaN and Inf ("NaN", not "nan%") and say when the output holds them."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QImage, QPixmap
from PySide6.QtWidgets import QHeaderView, QLabel, QPlainTextEdit, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from inspector.core.result import RunResult

from .number_format import fmt, nonfinite_text

PICTURE_SIZE = 224  # pixels a side of the input picture


def rgb_pixmap(rgb: np.ndarray, size: int = PICTURE_SIZE) -> QPixmap:
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

    A segmentation's predicted classes are drawn over it, with a legend; a box dragged on it is
    reported in fractions of the picture (the window makes it a seg:CLASS@box target).

    Signals
    -------
    sigClicked(float, float): the picture was clicked at (fy, fx), fractions of its height and width.
    sigBoxDragged(float, float, float, float): a box was dragged from (fy0, fx0) to (fy1, fx1).
    """

    sigClicked = Signal(float, float)
    sigBoxDragged = Signal(float, float, float, float)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.picture = QLabel("no input yet")
        self.picture.setAlignment(Qt.AlignCenter)
        self.picture.setMinimumSize(160, 160)
        self.caption = QLabel(" ")
        self.caption.setWordWrap(True)
        self.rgb: np.ndarray | None = None  # (H, W, 3) uint8: the picture shown, before any class tint
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.picture, 1)
        layout.addWidget(self.caption)

    def _fraction(self, event) -> tuple[float, float] | None:
        pixmap = self.picture.pixmap()
        if pixmap is None or pixmap.isNull():
            return None
        point = self.picture.mapFrom(self, event.position().toPoint())
        left = (self.picture.width() - pixmap.width()) / 2
        top = (self.picture.height() - pixmap.height()) / 2
        fx, fy = (point.x() - left) / pixmap.width(), (point.y() - top) / pixmap.height()
        return (fy, fx) if 0 <= fx < 1 and 0 <= fy < 1 else None

    def mousePressEvent(self, event) -> None:
        self._pressed = self._fraction(event)

    def mouseReleaseEvent(self, event) -> None:
        start, end = getattr(self, "_pressed", None), self._fraction(event)
        self._pressed = None
        if start is None or end is None:
            return
        if abs(end[0] - start[0]) < 0.03 and abs(end[1] - start[1]) < 0.03:
            self.sigClicked.emit(*start)
        else:
            (y0, y1), (x0, x1) = sorted((start[0], end[0])), sorted((start[1], end[1]))
            self.sigBoxDragged.emit(y0, x0, y1, x1)

    def show_input(self, array: np.ndarray | None, preprocess, classes: np.ndarray | None = None,
                   labels: list[str] | None = None) -> None:
        """The input as the model sees it; with `classes` (a segmentation's (H, W) prediction) tinted
        by class, and a legend of the classes present."""
        if array is None:
            return
        self.rgb = None
        shape = "×".join(map(str, array.shape))
        if array.ndim == 4 and array.shape[1] == 3:
            if preprocess is not None:
                picture = preprocess.to_display(array)
                caption = f"as the model sees it: {shape}"
            else:  # no preprocessing known: the tensor's own range stretched to the screen's
                values = np.nan_to_num(array[0].transpose(1, 2, 0).astype(np.float64))
                lo, hi = values.min(), values.max()
                picture = ((values - lo) / (hi - lo if hi > lo else 1.0) * 255).round().astype(np.uint8)
                caption = f"the input tensor {shape}, its range stretched to show it"
            self.rgb = picture
            if classes is not None:
                from inspector.core.segmentation import legend, overlay

                picture = overlay(picture, classes, size=PICTURE_SIZE)  # at the size it is shown
                caption += "<br>" + " ".join(
                    f"<span style='background:rgb{colour}'>&nbsp;&nbsp;</span> {label} {share:.0%}"
                    for _i, label, colour, share in legend(classes, labels)[:8])
                caption += "<br>drag a box to make it the target region"
            self.picture.setPixmap(rgb_pixmap(picture))
            self.caption.setText(caption)
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
