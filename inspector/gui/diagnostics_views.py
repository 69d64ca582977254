"""Gradient flow across depth, dead units, and the statistics table of every capture."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (QFileDialog, QHBoxLayout, QLabel, QPushButton, QTableWidget, QTableWidgetItem,
                               QVBoxLayout, QWidget)

from inspector.core.diagnostics import dead_units, gradient_flow, stats_table, to_csv
from inspector.core.result import RunResult

VANISHING, EXPLODING = 1e-7, 1e3


class GradientFlowView(QWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.plot = pg.PlotWidget()
        self.plot.setLogMode(y=True)
        self.plot.setLabel("left", "gradient L2 norm")
        self.plot.setLabel("bottom", "depth (forward order)")
        self.plot.addLegend()
        self.plot.getAxis("left").enableAutoSIPrefix(False)
        self.plot.showGrid(y=True, alpha=0.2)
        # In log mode the regions are given in log10 units; they do not take part in auto-range.
        low = pg.LinearRegionItem((np.log10(VANISHING) - 30, np.log10(VANISHING)), orientation="horizontal",
                                  movable=False, brush=(80, 80, 255, 50))
        high = pg.LinearRegionItem((np.log10(EXPLODING), np.log10(EXPLODING) + 30), orientation="horizontal",
                                   movable=False, brush=(255, 80, 80, 50))
        for region, text in ((low, "vanishing"), (high, "exploding")):
            self.plot.addItem(region, ignoreBounds=True)
            label = pg.InfLineLabel(region.lines[1 if region is low else 0], text, position=0.95, anchor=(1, 1))
            label.setColor((200, 200, 200))
        self.norm_curve = self.plot.plot(pen="#4c78a8", symbol="o", symbolSize=5, name="L2 norm")
        self.mean_curve = self.plot.plot(pen="#f58518", symbol="t", symbolSize=5, name="mean |grad|")
        self.summary = QLabel(" ")
        self.summary.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.summary)
        self.rows = []

    def show_result(self, result: RunResult, rows=None, dead: dict[str, float] | None = None) -> None:
        """Plot the result's gradient flow; `rows`/`dead` when already worked out (off the GUI thread)."""
        self.rows = rows if rows is not None else gradient_flow(result, VANISHING, EXPLODING)
        if not self.rows:
            self.norm_curve.setData([], [])
            self.mean_curve.setData([], [])
            self.summary.setText("No gradients captured: tick layers with grad_output (or parameters).")
            return
        x = np.array([r.depth for r in self.rows], dtype=float)
        norm = np.array([max(r.norm, 1e-30) for r in self.rows])
        mean = np.array([max(r.mean_abs, 1e-30) if np.isfinite(r.mean_abs) else np.nan for r in self.rows])
        self.norm_curve.setData(x, norm)
        self.mean_curve.setData(x[np.isfinite(mean)], mean[np.isfinite(mean)])
        finite = np.concatenate([norm, mean[np.isfinite(mean)]])
        lo, hi = np.log10(finite.min()), np.log10(finite.max())
        self.plot.setYRange(min(lo, np.log10(VANISHING)) - 0.5, max(hi, np.log10(EXPLODING)) + 0.5, padding=0)
        self.plot.setXRange(x.min() - 0.5, x.max() + 0.5, padding=0)
        vanishing = [r.key for r in self.rows if r.vanishing]
        exploding = [r.key for r in self.rows if r.exploding]
        dead = dead if dead is not None else dead_units(result)
        worst = sorted(dead.items(), key=lambda kv: -kv[1])[:5]
        parts = [f"{len(self.rows)} gradient captures"]
        if vanishing:
            parts.append(f"vanishing (< {VANISHING:g}): {', '.join(vanishing[:5])}")
        if exploding:
            parts.append(f"exploding (> {EXPLODING:g}): {', '.join(exploding[:5])}")
        if worst:
            parts.append("dead channels: " + ", ".join(f"{k} {v:.0%}" for k, v in worst))
        self.summary.setText(" · ".join(parts))


class StatsTable(QWidget):
    """Every capture's statistics; sortable, copyable, exportable as CSV."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.table = QTableWidget()
        self.table.setSortingEnabled(True)
        self.table.setEditTriggers(QTableWidget.NoEditTriggers)
        self.rows: list[dict] = []
        copy = QPushButton("Copy")
        copy.clicked.connect(self.copy)
        export = QPushButton("Export CSV…")
        export.clicked.connect(self._on_export)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(copy)
        buttons.addWidget(export)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)

    def show_result(self, result: RunResult) -> None:
        self.rows = stats_table(result)
        columns = list(self.rows[0]) if self.rows else []
        self.table.setSortingEnabled(False)
        self.table.clear()
        self.table.setColumnCount(len(columns))
        self.table.setRowCount(len(self.rows))
        self.table.setHorizontalHeaderLabels(columns)
        for r, row in enumerate(self.rows):
            for c, name in enumerate(columns):
                value = row[name]
                item = QTableWidgetItem()
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    item.setData(Qt.DisplayRole, float(value) if isinstance(value, float) else int(value))
                else:
                    item.setText(str(value))
                self.table.setItem(r, c, item)
        self.table.setSortingEnabled(True)

    def csv(self) -> str:
        return to_csv(self.rows)

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.csv())

    def _on_export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export statistics", "statistics.csv", "CSV (*.csv)")
        if path:
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(self.csv())
