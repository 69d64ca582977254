"""Small read-only views: predictions, the input as the model sees it, the hook log.

Predictions spell out NaN and Inf ("NaN", not "nan%") and say when the output holds them."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QImage, QPixmap
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QSlider,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.core.engine.result import RunResult

from .number_format import fmt, nonfinite_text

PICTURE_SIZE = 224  # pixels a side of the input picture


def rgb_pixmap(rgb: np.ndarray, size: int = PICTURE_SIZE) -> QPixmap:
    rgb = np.ascontiguousarray(rgb)
    h, w, _ = rgb.shape
    image = QImage(rgb.data, w, h, 3 * w, QImage.Format_RGB888).copy()
    return QPixmap.fromImage(image).scaled(size, size, Qt.KeepAspectRatio, Qt.FastTransformation)


class PredictionsView(QTableWidget):
    """A classifier's top classes; a detector's detections scoring at least the shown score, best first,
    the target's selected (a click on a row makes that detection the target).

    Signals
    -------
    sigDetectionPicked(int): the rank of the detection whose row was clicked.
    """

    sigDetectionPicked = Signal(int)

    def __init__(self, parent=None) -> None:
        super().__init__(0, 3, parent)
        self.setHorizontalHeaderLabels(["Class", "Probability", "Logit"])
        self.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
        self.verticalHeader().setVisible(False)
        self.setEditTriggers(QTableWidget.NoEditTriggers)
        self.setSelectionBehavior(QTableWidget.SelectRows)
        self.setSelectionMode(QTableWidget.SingleSelection)
        self.setMinimumHeight(170)
        self.result: RunResult | None = None
        self.min_score = 0.0
        self.ranks: list[int] = []  # the detection shown on each row
        self.cellClicked.connect(self._on_clicked)

    def show_result(self, result: RunResult) -> None:
        self.result = result
        if result.detections is not None:
            self._show_detections(result)
            return
        self.setHorizontalHeaderLabels(["Class", "Probability", "Logit"])
        self.ranks = []
        rows = result.predictions
        self.setRowCount(len(rows))
        for r, p in enumerate(rows):
            self.setItem(r, 0, QTableWidgetItem(f"{p.label} ({p.index})"))
            self.setItem(r, 1, QTableWidgetItem(fmt(p.probability, ".2%")))
            self.setItem(r, 2, QTableWidgetItem(fmt(p.logit, ".3f")))
        self.setToolTip(self.nonfinite_note(result))

    def set_min_score(self, value: float) -> None:
        self.min_score = value
        if self.result is not None and self.result.detections is not None:
            self._show_detections(self.result)

    def _show_detections(self, result: RunResult) -> None:
        from inspector.core.detection.picture import MOST, shown

        self.setHorizontalHeaderLabels(["Detection", "Score", "Box"])
        self.ranks = shown(result.detections, self.min_score)
        if result.target_detection is not None and result.target_detection not in self.ranks:
            self.ranks = sorted(self.ranks + [result.target_detection])  # the target's row, whatever its score
        self.setRowCount(len(self.ranks))
        self.blockSignals(True)
        self.clearSelection()
        for r, k in enumerate(self.ranks):
            d = result.detections[k]
            self.setItem(r, 0, QTableWidgetItem(f"box:{k} {d.name} ({d.label})"))
            self.setItem(r, 1, QTableWidgetItem(fmt(d.score, ".3f")))
            self.setItem(r, 2, QTableWidgetItem(", ".join(f"{v:.0f}" for v in d.box)))
            if k == result.target_detection:
                self.selectRow(r)
        self.blockSignals(False)
        self.setToolTip(f"{len(self.ranks)} of {len(result.detections)} detections listed: the best {MOST} at most, "
                        f"scoring {self.min_score:.2f} or more (the slider under the input). Boxes are x0, y0, x1, "
                        f"y1 in input pixels. Click a row to explain that box.")

    def _on_clicked(self, row: int, _column: int) -> None:
        if 0 <= row < len(self.ranks):
            self.sigDetectionPicked.emit(self.ranks[row])

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
    sigMinScore(float): a detector's boxes are shown from this score on (the slider moved).

    A detector's boxes are drawn over it with class and score, the target's in yellow; the slider
    hides the boxes scoring under its value (the target's stays).
    """

    sigClicked = Signal(float, float)
    sigBoxDragged = Signal(float, float, float, float)
    sigMinScore = Signal(float)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.picture = QLabel("no input yet")
        self.picture.setAlignment(Qt.AlignCenter)
        self.picture.setMinimumSize(160, 160)
        self.caption = QLabel(" ")
        self.caption.setWordWrap(True)
        self.rgb: np.ndarray | None = None  # (H, W, 3) uint8: the picture shown, before any class tint
        self.detections = None  # a detector's, best first
        self.chosen: int | None = None  # the rank of the target's detection
        self.masks = self.keypoints = None  # Mask or Keypoint R-CNN's, by rank
        self._min_score: float | None = None  # None: the default for the detections shown
        self.score_slider = QSlider(Qt.Horizontal)
        self.score_slider.setRange(0, 100)
        self.score_slider.setToolTip("Show the boxes scoring at least this (the model's own threshold is unchanged)")
        self.score_value = QLabel("0.50")
        self.score_row = QWidget()
        row = QHBoxLayout(self.score_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Boxes from score"))
        row.addWidget(self.score_slider, 1)
        row.addWidget(self.score_value)
        self.score_row.hide()
        self.score_slider.valueChanged.connect(self._on_slider)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.picture, 1)
        layout.addWidget(self.score_row)
        layout.addWidget(self.caption)

    @property
    def min_score(self) -> float:
        if self._min_score is not None:
            return self._min_score
        from inspector.core.detection.picture import default_min_score

        return default_min_score(self.detections or [])

    @property
    def chosen_min_score(self) -> float | None:
        """The score the slider was moved to (None: not moved since the model loaded: each run's default)."""
        return self._min_score

    def forget_min_score(self) -> None:
        """Another model: its boxes are shown from its own default score until the slider moves."""
        self._min_score = None

    def _on_slider(self, value: int) -> None:
        self._min_score = value / 100
        self.score_value.setText(f"{self._min_score:.2f}")
        if self.detections is not None and self.rgb is not None:
            self._draw_detections()
        self.sigMinScore.emit(self._min_score)

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
                   labels: list[str] | None = None, detections=None, chosen: int | None = None,
                   extras: dict | None = None) -> None:
        """The input as the model sees it; with `classes` (a segmentation's (H, W) prediction) tinted
        by class, and a legend of the classes present; with `detections` (a detector's) their boxes, and
        the masks or keypoints in `extras` (a RunResult's) where the model gives them."""
        if array is None:
            return
        self.rgb = None
        self.detections, self.chosen = detections, chosen
        self.masks, self.keypoints = ((extras or {}).get(f"detections:{name}") for name in ("masks", "keypoints"))
        self.score_row.setVisible(detections is not None)
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
                from inspector.core.pictures.segmentation import legend, overlay

                picture = overlay(picture, classes, size=PICTURE_SIZE)  # at the size it is shown
                caption += "<br>" + " ".join(
                    f"<span style='background:rgb{colour}'>&nbsp;&nbsp;</span> {label} {share:.0%}"
                    for _i, label, colour, share in legend(classes, labels)[:8])
                caption += "<br>drag a box to make it the target region"
            self.picture.setPixmap(rgb_pixmap(picture))
            self.caption.setText(caption)
            if detections is not None:
                self._draw_detections()
        else:
            self.picture.setText(np.array2string(array.reshape(-1)[:12], precision=3))
            self.caption.setText(f"tensor input {shape}")


    def _draw_detections(self) -> None:
        from inspector.core.detection.picture import MOST, draw_detections, shown

        score = self.min_score
        self.score_slider.blockSignals(True)
        self.score_slider.setValue(round(score * 100))
        self.score_slider.blockSignals(False)
        self.score_value.setText(f"{score:.2f}")
        self.picture.setPixmap(rgb_pixmap(draw_detections(self.rgb, self.detections, score, self.chosen,
                                                          PICTURE_SIZE, self.masks, self.keypoints)))
        count = len(shown(self.detections, score))
        self.caption.setText(f"{count} of {len(self.detections)} detections shown (scoring {score:.2f} or more, "
                             f"{MOST} at most)" + ("; masks tinted" if self.masks is not None else "")
                             + ("; keypoints dotted" if self.keypoints is not None else "")
                             + ("; click a box to explain it" if count else "; lower the slider to see more"))


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
