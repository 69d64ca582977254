"""A sorted bar chart of one value per concept (an image's coefficients, or their relevance for a class): the
largest first, each bar labelled with its concept's id; a click on a bar picks that concept."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal

BAR = "#4c78a8"
NEGATIVE = "#d62728"
PICKED = "#f2a900"
MOST_LABELS = 24  # ids written under the bars while there are this few; else every n-th


class ConceptBars(pg.PlotWidget):
    """Signals
    -------
    sigPicked(int): the concept whose bar was clicked.
    """

    sigPicked = Signal(int)

    def __init__(self, title: str, parent=None) -> None:
        super().__init__(parent)
        self.setMenuEnabled(False)
        self.setMouseEnabled(x=False, y=False)
        self.hideButtons()
        self.setTitle(title, size="9pt")
        self.setLabel("bottom", "concept (sorted)")
        self.bars = pg.BarGraphItem(x=[], height=[], width=0.8, brush=BAR)
        self.addItem(self.bars)
        self.order = np.zeros(0, int)  # the concept at each bar, left to right
        self.values = np.zeros(0, np.float32)  # each concept's value (by concept id)
        self.picked: int | None = None
        self.scene().sigMouseClicked.connect(self._on_mouse_clicked)
        self.setMinimumHeight(100)

    def show_values(self, values: np.ndarray, picked: int | None = None) -> None:
        """One bar per concept, sorted from the largest value down (ties in id order)."""
        self.values = np.nan_to_num(np.asarray(values, np.float32).reshape(-1))
        self.order = np.argsort(-self.values, kind="stable")
        self.picked = picked
        self._draw()
        ids = [(i, str(int(c))) for i, c in enumerate(self.order)]
        step = max(1, -(-len(ids) // MOST_LABELS))
        self.getAxis("bottom").setTicks([ids[::step], []])
        self.enableAutoRange()

    def set_picked(self, concept: int | None) -> None:
        if concept != self.picked:
            self.picked = concept
            self._draw()

    def clear_values(self) -> None:
        self.values, self.order, self.picked = np.zeros(0, np.float32), np.zeros(0, int), None
        self.bars.setOpts(x=[], height=[], brushes=None)
        self.getAxis("bottom").setTicks([[], []])

    def heights(self) -> np.ndarray:
        """The bars' heights, left to right (what is drawn)."""
        return np.asarray(self.bars.opts["height"], np.float32)

    def bar_of(self, concept: int) -> int:
        return int(np.flatnonzero(self.order == concept)[0])

    def _draw(self) -> None:
        height = self.values[self.order]
        brushes = [pg.mkBrush(PICKED if c == self.picked else NEGATIVE if v < 0 else BAR)
                   for c, v in zip(self.order, height)]
        self.bars.setOpts(x=np.arange(len(height)), height=height, width=0.8, brushes=brushes)

    def _on_mouse_clicked(self, event) -> None:
        if not len(self.order):
            return
        point = self.getViewBox().mapSceneToView(event.scenePos())
        i = int(round(point.x()))
        if 0 <= i < len(self.order) and abs(point.x() - i) <= 0.45:
            self.sigPicked.emit(int(self.order[i]))
