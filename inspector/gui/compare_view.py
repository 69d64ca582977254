"""Baseline | edited | difference for a layer picked here, the input gradient and predictions.

The baseline (no edits) result is kept by the worker while model, input, device and
target stay the same, so this view never re-runs it. Its layer picker is its own: the
window fills it (`set_layers`) and answers `sigLayerChosen` by calling `show` with that
layer's keys.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout,
                               QWidget)

from inspector.core.mosaic import PAGE
from inspector.core.result import RunResult

from .compare_grid import COLS, ROWS, CompareGrid  # noqa: F401  (ROWS, COLS: the grid's names)
from .controls import searchable
from .number_format import fmt


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
    """Signals
    -------
    sigLayerChosen(str): the user picked this layer in the view's own picker.
    """

    sigLayerChosen = Signal(str)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.layer = searchable(QComboBox())
        self.layer.setMinimumContentsLength(20)
        self.layer.currentIndexChanged.connect(self._on_layer)
        self.grid = CompareGrid()
        self.canvas = self.grid
        self.images = self.grid.images
        self.caption = QLabel("Add an edit to compare against the baseline.")
        self.caption.setWordWrap(True)
        self.hover = QLabel(" ")
        self.grid.on_hover = self.hover.setText
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["Class", "Baseline", "Edited", "Δ"])
        self.table.setMaximumHeight(170)
        self.table.verticalHeader().setVisible(False)
        head = QHBoxLayout()
        head.addWidget(QLabel("Layer"))
        head.addWidget(self.layer, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(head)
        layout.addWidget(self.caption)
        layout.addWidget(self.grid, 1)
        layout.addWidget(self.hover)
        layout.addWidget(self.table)

    def set_layers(self, names: list[str], current: str | None = None) -> None:
        """Fill the picker with `names` and select `current`, without emitting sigLayerChosen."""
        self.layer.blockSignals(True)
        self.layer.clear()
        for name in names:
            self.layer.addItem(name, name)
        self.layer.setCurrentIndex(max(self.layer.findData(current), 0) if names else -1)
        self.layer.blockSignals(False)

    def _on_layer(self, index: int) -> None:
        name = self.layer.itemData(index)
        if name:
            self.sigLayerChosen.emit(name)

    def clear(self) -> None:
        self.grid.clear_all()
        self.table.setRowCount(0)
        self.hover.setText(" ")

    def show(self, baseline: RunResult | None, edited: RunResult, activation_key: str, gradient_key: str) -> None:
        if baseline is None or baseline is edited:
            self.clear()
            self.caption.setText("No edits are on: the baseline is the result. Add or enable an edit to compare.")
            return
        notes = [f"Edits: {', '.join(edited.edits) or 'none'}"]
        rows = {"activation": activation_key, "gradient": gradient_key, "input gradient": "input:grad"}
        for row, key in rows.items():
            if row == "input gradient":
                before, after = baseline.input_grad, edited.input_grad
            else:
                a, b = baseline.captures.get(key), edited.captures.get(key)
                before, after = (a.array if a else None), (b.array if b else None)
            if not self.grid.show_row(row, key, before, after):
                notes.append(f"{row}: nothing to compare at {key}")
            elif (total := self.grid.shown[row].mosaic.total) > PAGE:
                notes.append(f"{row}: channels 0-{PAGE - 1} of {total}")
        self.caption.setText(" · ".join(notes))
        deltas = prediction_deltas(baseline, edited)
        self.table.setRowCount(len(deltas))
        for r, (label, p0, p1, d) in enumerate(deltas):
            for c, text in enumerate((label, fmt(p0, ".2%"), fmt(p1, ".2%"), fmt(d, "+.2%"))):
                self.table.setItem(r, c, QTableWidgetItem(text))
