"""Baseline | edited | difference for the selected layer, the input gradient and predictions.

The baseline (no edits) result is kept by the worker while model, input, device and
target stay the same, so this view never re-runs it.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from inspector.core.mosaic import levels, make_mosaic
from inspector.core.result import RunResult

ROWS = ("activation", "gradient", "input gradient")
COLS = ("baseline", "edited", "difference")


def prediction_deltas(baseline: RunResult, edited: RunResult) -> list[tuple[str, float, float, float]]:
    """(label, baseline p, edited p, delta) for the union of both top-k lists, edited order first."""
    if baseline.output is None or edited.output is None or baseline.output.ndim != 2:
        return []

    def softmax(logits):
        z = logits[0].astype(np.float64)
        e = np.exp(z - z.max())
        return e / e.sum()

    p0, p1 = softmax(baseline.output), softmax(edited.output)
    labels = {p.index: p.label for p in baseline.predictions + edited.predictions}
    order = list(dict.fromkeys([p.index for p in edited.predictions] + [p.index for p in baseline.predictions]))
    return [(labels[i], float(p0[i]), float(p1[i]), float(p1[i] - p0[i])) for i in order]


class CompareView(QWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.canvas = pg.GraphicsLayoutWidget()
        self.images: dict[tuple[str, str], pg.ImageItem] = {}
        for c, col in enumerate(COLS):
            self.canvas.addLabel(col, row=0, col=c + 1)
        for r, row in enumerate(ROWS):
            self.canvas.addLabel(row, row=r + 1, col=0, angle=-90)
            for c, col in enumerate(COLS):
                view = self.canvas.addViewBox(row=r + 1, col=c + 1, lockAspect=True, invertY=True)
                view.setMenuEnabled(False)
                image = pg.ImageItem(axisOrder="row-major")
                image.setColorMap(pg.colormap.get("CET-D1" if (col == "difference" or row != "activation")
                                                  else "viridis"))
                view.addItem(image)
                self.images[row, col] = image
        self.caption = QLabel("Add an edit to compare against the baseline.")
        self.caption.setWordWrap(True)
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["Class", "Baseline", "Edited", "Δ"])
        self.table.setMaximumHeight(170)
        self.table.verticalHeader().setVisible(False)
        layout = QVBoxLayout(self)
        layout.addWidget(self.caption)
        layout.addWidget(self.canvas, 1)
        layout.addWidget(self.table)

    def clear(self) -> None:
        for image in self.images.values():
            image.clear()
        self.table.setRowCount(0)

    def show(self, baseline: RunResult | None, edited: RunResult, activation_key: str, gradient_key: str) -> None:
        if baseline is None or baseline is edited:
            self.clear()
            self.caption.setText("No edits are on: the baseline is the result. Add or enable an edit to compare.")
            return
        self.caption.setText(f"Edits: {', '.join(edited.edits) or 'none'}")
        pairs = {
            "activation": (baseline.captures.get(activation_key), edited.captures.get(activation_key)),
            "gradient": (baseline.captures.get(gradient_key), edited.captures.get(gradient_key)),
        }
        arrays = {row: (a.array if a else None, b.array if b else None) for row, (a, b) in pairs.items()}
        arrays["input gradient"] = (baseline.input_grad, edited.input_grad)
        for row, (before, after) in arrays.items():
            self._show_row(row, before, after)
        deltas = prediction_deltas(baseline, edited)
        self.table.setRowCount(len(deltas))
        for r, (label, p0, p1, d) in enumerate(deltas):
            for c, text in enumerate((label, f"{p0:.2%}", f"{p1:.2%}", f"{d:+.2%}")):
                self.table.setItem(r, c, QTableWidgetItem(text))

    def _show_row(self, row: str, before, after) -> None:
        if before is None or after is None or np.shape(before) != np.shape(after):
            for col in COLS:
                self.images[row, col].clear()
            return
        diverging = row != "activation"
        mosaics = [make_mosaic(before).image, make_mosaic(after).image]
        lo, hi = levels(np.concatenate([m.reshape(-1) for m in mosaics]), diverging)
        diff = mosaics[1] - mosaics[0]
        dlo, dhi = levels(diff, True)
        for col, image, lv in zip(COLS, (*mosaics, diff), ((lo, hi), (lo, hi), (dlo, dhi))):
            self.images[row, col].setImage(image, levels=lv, autoLevels=False)
            self.images[row, col].getViewBox().autoRange(padding=0.01)
