"""The Compare tab's picture of a detector's boxes: the edited run's (or the second model's) over the input,
each marked by what became of it against the baseline (or the first model): kept, moved, appeared, vanished."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

from inspector.core.detection.changes import BoxChange, box_changes, summary
from inspector.core.detection.picture import MOST, default_min_score, draw_changes

SIZE = 320  # pixels a side the boxes are drawn at (the view fits it to its room, and zooms)
LEGEND = ("kept: its class's colour · <span style='color:#ff9100'>moved</span>: orange (grey dashes: before) · "
          "<span style='color:#00c853'>appeared</span>: green + · <span style='color:#e53935'>vanished</span>: "
          "red dashes -")


class BoxChangesView(QWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.picture = pg.GraphicsLayoutWidget()
        self.picture.setMinimumSize(160, 160)
        view = self.picture.addViewBox(lockAspect=True, invertY=True)
        view.setMenuEnabled(False)
        self.image = pg.ImageItem(axisOrder="row-major")
        view.addItem(self.image)
        self.view = view
        self.drawn: np.ndarray | None = None  # (SIZE, SIZE', 3) uint8: what the view shows
        self.caption = QLabel(" ")
        self.caption.setWordWrap(True)
        self.caption.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.picture, 1)
        layout.addWidget(self.caption)
        self.rgb: np.ndarray | None = None  # the input as shown on the Layer tab
        self._min_score: float | None = None  # the input's slider (None: the default for the baseline's boxes)
        self.before = self.after = None
        self.changes: list[BoxChange] = []
        self.names = ("baseline", "edited")

    @property
    def min_score(self) -> float:
        return self._min_score if self._min_score is not None else default_min_score(self.before or [])

    def set_backdrop(self, rgb: np.ndarray | None, min_score: float | None) -> None:
        """The input picture the boxes are drawn over, and the score they are shown from, drawn with the next
        runs' boxes (`show_changes`): a result sets its input here in its first turn and its boxes turns later
        (the Compare tab a row a turn, the boxes last), so drawing now drew the runs before over it, in the
        result's own turn (3-12 ms of it), only to draw it again."""
        self.rgb, self._min_score = rgb, min_score

    def set_min_score(self, value: float) -> None:
        self._min_score = value
        if self.isVisible():
            self._draw()

    def show_changes(self, before, after, names: tuple[str, str]) -> list[BoxChange]:
        """Compare two runs' detections (None: not a detector: the view hides); the changes, for the table."""
        self.before, self.after, self.names = before, after, names
        self.setVisible(before is not None and after is not None)
        self._draw()
        return self.changes

    def _draw(self) -> None:
        if self.before is None or self.after is None:
            self.changes = []
            return
        self.changes = box_changes(self.before, self.after, self.min_score, MOST)
        shape = None if self.drawn is None else self.drawn.shape
        self.drawn = draw_changes(self.rgb, self.before, self.after, self.changes, SIZE) if self.rgb is not None else None
        fresh = self.drawn is not None and self.drawn.shape != shape  # another picture's shape: fitted again
        if self.drawn is None:
            self.image.clear()
        else:
            self.image.setImage(self.drawn, autoLevels=False, levels=(0, 255))
            if fresh:
                self.view.autoRange(padding=0.01)
        self.caption.setText(f"{self.names[1].capitalize()} vs {self.names[0]}, boxes from score {self.min_score:.2f} "
                             f"(the best {MOST} each): {summary(self.changes)}.<br>{LEGEND}")
