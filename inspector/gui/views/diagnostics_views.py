"""Gradient flow across depth, dead units, and the statistics table of every capture.

The flow plot names its layers on the x axis (shortened; hover gives the full key and values)
and its y axis says which measure is drawn (a control picks L2 norm, mean |grad| or both).
The table spells out NaN and Inf and still sorts them as numbers.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.core.common.errors import WriteError
from inspector.core.engine.diagnostics import (
    dead_units,
    gradient_flow,
    stats_table,
    to_csv,
)
from inspector.core.engine.result import RunResult
from inspector.core.storage.writes import write_text
from inspector.gui.common import file_dialogs

from .layer_plot import LayerPlot
from .number_format import fmt

VANISHING, EXPLODING = 1e-7, 1e3
MEASURES = {"L2 norm": "gradient L2 norm", "mean |grad|": "mean |gradient|",
            "both": "gradient L2 norm and mean |gradient|"}
CURVE_COLOURS = {"L2 norm": "#4c78a8", "mean |grad|": "#f58518"}
SITE_SYMBOLS = {"grad_output": "o", "grad_input": "t", "grad": "s"}  # a layer's several gradients told apart


def site_of(key: str) -> str:
    """What a flow row's gradient is of: grad_output, grad_input, or grad (a parameter's, or the input's)."""
    return key.rpartition(":")[2].partition("#")[0] or key


class GradientFlowView(LayerPlot):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.legend = self.plot.addLegend()
        # In log mode the regions are given in log10 units; they do not take part in auto-range.
        low = pg.LinearRegionItem((np.log10(VANISHING) - 30, np.log10(VANISHING)), orientation="horizontal",
                                  movable=False, brush=(80, 80, 255, 50))
        high = pg.LinearRegionItem((np.log10(EXPLODING), np.log10(EXPLODING) + 30), orientation="horizontal",
                                   movable=False, brush=(255, 80, 80, 50))
        for region, text in ((low, "vanishing"), (high, "exploding")):
            self.plot.addItem(region, ignoreBounds=True)
            label = pg.InfLineLabel(region.lines[1 if region is low else 0], text, position=0.95, anchor=(1, 1))
            label.setColor((200, 200, 200))
        self.curves: dict[tuple[str, str], pg.PlotDataItem] = {}  # (measure, site) -> its curve, made when needed
        self.measure = QComboBox()
        self.measure.addItems(list(MEASURES))
        self.measure.currentTextChanged.connect(self._show_measure)
        self.summary = QLabel(" ")
        self.summary.setWordWrap(True)
        head = QHBoxLayout()
        head.addWidget(QLabel("Show"))
        head.addWidget(self.measure)
        head.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(head)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.hover)
        layout.addWidget(self.summary)
        self.rows = []
        self._show_measure(self.measure.currentText())

    def layers(self) -> list[tuple[float, str]]:
        return [(r.depth, r.key) for r in self.rows]

    @property
    def norm_curve(self) -> pg.PlotDataItem:
        return self.curve("L2 norm", "grad_output")

    @property
    def mean_curve(self) -> pg.PlotDataItem:
        return self.curve("mean |grad|", "grad_output")

    def curve(self, measure: str, site: str) -> pg.PlotDataItem:
        """The curve of `measure` ("L2 norm" or "mean |grad|") over the captures of gradient `site`: the measure
        its colour, the site its symbol."""
        found = self.curves.get((measure, site))
        if found is None:
            found = self.curves[measure, site] = self.plot.plot(
                pen=CURVE_COLOURS[measure], symbol=SITE_SYMBOLS.get(site, "o"), symbolSize=6,
                symbolBrush=CURVE_COLOURS[measure], symbolPen=CURVE_COLOURS[measure])
        return found

    def _show_measure(self, measure: str) -> None:
        """Draw the chosen curve(s), the legend naming only those drawn (pyqtgraph crosses out a hidden one's icon:
        it read as a broken series), each by its measure and, where a layer has several, its gradient site (two
        unnamed dots a layer, grad_output's and grad_input's, read as noise); the y axis names what is drawn."""
        self.legend.clear()
        sites = {site for (_m, site), curve in self.curves.items() if curve.xData is not None and len(curve.xData)}
        for (name, site), curve in self.curves.items():
            shown = measure in (name, "both") and site in sites
            curve.setVisible(shown)
            if shown:
                self.legend.addItem(curve, name if len(sites) == 1 else f"{name}, {site}")
        self.plot.setLabel("left", MEASURES[measure])

    def _plot(self, rows) -> np.ndarray:
        """Each site's curves over `rows`; the values drawn (for the range)."""
        for curve in self.curves.values():
            curve.setData([], [])
        drawn = []
        for site in dict.fromkeys(site_of(r.key) for r in rows):
            mine = [r for r in rows if site_of(r.key) == site]
            x = np.array([r.depth for r in mine], dtype=float)
            norm = np.array([max(r.norm, 1e-30) for r in mine])
            mean = np.array([max(r.mean_abs, 1e-30) if np.isfinite(r.mean_abs) else np.nan for r in mine])
            self.curve("L2 norm", site).setData(x, norm)
            self.curve("mean |grad|", site).setData(x[np.isfinite(mean)], mean[np.isfinite(mean)])
            drawn += [norm, mean[np.isfinite(mean)]]
        self._show_measure(self.measure.currentText())
        return np.concatenate(drawn) if drawn else np.zeros(0)

    def row_at(self, x: float):
        """The flow row drawn at depth x (within half a step), or None."""
        if not self.rows:
            return None
        row = min(self.rows, key=lambda r: abs(r.depth - x))
        return row if abs(row.depth - x) <= 0.5 else None

    def text_at(self, x: float) -> str | None:
        row = self.row_at(x)
        return None if row is None else f"{row.key}   L2 norm {fmt(row.norm)}   mean |grad| {fmt(row.mean_abs)}"

    def show_pending(self, message: str) -> None:
        """No flow to plot yet (the worker is still working it out): say so instead of the last one."""
        self.rows = []
        self._plot([])
        self.plot.getAxis("bottom").setTicks(None)
        self.hover.setText(" ")
        self.summary.setText(message)

    def show_result(self, result: RunResult, rows=None, dead: dict[str, float] | None = None) -> None:
        """Plot the result's gradient flow; `rows`/`dead` when already worked out (off the GUI thread)."""
        self.rows = rows if rows is not None else gradient_flow(result, VANISHING, EXPLODING)
        self.hover.setText(" ")
        if not self.rows:
            self._plot([])
            self.plot.getAxis("bottom").setTicks(None)
            self.summary.setText("No gradients captured: tick layers with grad_output (or parameters).")
            return
        x = np.array([r.depth for r in self.rows], dtype=float)
        finite = self._plot(self.rows)
        self._update_ticks()
        lo, hi = np.log10(finite.min()), np.log10(finite.max())
        self.plot.setYRange(min(lo, np.log10(VANISHING)) - 0.5, max(hi, np.log10(EXPLODING)) + 0.5, padding=0)
        self.plot.setXRange(x.min() - 0.5, x.max() + 0.5, padding=0)
        vanishing = [r.key for r in self.rows if r.vanishing]
        exploding = [r.key for r in self.rows if r.exploding]
        dead = dead if dead is not None else dead_units(result)
        worst = sorted(dead.items(), key=lambda kv: -kv[1])[:5]
        parts = [f"{len(self.rows)} gradient captures"]
        zeros = sum(r.norm == 0 for r in self.rows)
        if zeros:  # the run's warnings say why (a head of zero weights, nothing detected, ...)
            parts[0] += (", every one exactly 0" if zeros == len(self.rows) else f", {zeros} exactly 0") + (
                f": {' '.join(result.warnings)}" if result.warnings else "")
        if vanishing:
            parts.append(f"vanishing (< {VANISHING:g}): {', '.join(vanishing[:5])}")
        if exploding:
            parts.append(f"exploding (> {EXPLODING:g}): {', '.join(exploding[:5])}")
        if worst:
            parts.append("dead channels: " + ", ".join(f"{k} {v:.0%}" for k, v in worst))
        self.summary.setText(" · ".join(parts))


class NumberItem(QTableWidgetItem):
    """A number shown as text (NaN and Inf spelled out) that sorts by value, NaN last."""

    def __init__(self, value: float, spec: str = ".6g") -> None:
        super().__init__(fmt(value, spec) if isinstance(value, float) else str(value))
        self.value = float(value)

    def __lt__(self, other) -> bool:
        if not isinstance(other, NumberItem):
            return super().__lt__(other)
        a, b = self.value, other.value
        return bool((a == a and b != b) or a < b)  # (x != x: NaN)


class StatsTable(QWidget):
    """Every capture's statistics; sortable, copyable, exportable as CSV."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._place: tuple = ((0, 0), None)  # (scroll x, y), (sort column, order) to come back to
        self.table = QTableWidget()
        self.table.setSortingEnabled(True)
        self.table.setEditTriggers(QTableWidget.NoEditTriggers)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 8)
        self.rows: list[dict] = []
        copy = QPushButton("Copy")
        copy.clicked.connect(self.copy)
        export = QPushButton("Export CSV…")
        export.clicked.connect(self._on_export)
        self.status = QLabel(" ")
        buttons = QHBoxLayout()
        buttons.addWidget(self.status, 1)
        buttons.addWidget(copy)
        buttons.addWidget(export)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)

    def show_pending(self, message: str) -> None:
        """The statistics are still being worked out: an empty table that says so."""
        self._keep_place()
        self.rows = []
        self.table.clear()
        self.table.setRowCount(0)
        self.table.setColumnCount(0)
        self.status.setText(message)

    def show_result(self, result: RunResult) -> None:
        self.rows = stats_table(result)
        self.status.setText(f"{len(self.rows)} arrays")
        columns = list(self.rows[0]) if self.rows else []
        self._keep_place()
        (where, order), self._place = self._place, ((0, 0), None)
        h, v = self.table.horizontalScrollBar(), self.table.verticalScrollBar()
        self.table.setSortingEnabled(False)
        self.table.clear()
        self.table.setColumnCount(len(columns))
        self.table.setRowCount(len(self.rows))
        self.table.setHorizontalHeaderLabels(columns)
        for r, row in enumerate(self.rows):
            for c, name in enumerate(columns):
                value = row[name]
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    item = NumberItem(value)
                    if name in ("nan", "inf") and value:
                        item.setForeground(Qt.red)
                else:
                    item = QTableWidgetItem(str(value))
                self.table.setItem(r, c, item)
        self.table.setSortingEnabled(True)
        if order is not None and 0 <= order[0] < len(columns):
            self.table.sortItems(*order)
        if columns:
            self.table.resizeColumnToContents(0)  # the keys, readable in full
        QTimer.singleShot(0, self, lambda: (h.setValue(where[0]), v.setValue(where[1])))  # once laid out

    def _keep_place(self) -> None:
        """Remember the scroll position and sort of the filled table: a re-run empties it (the statistics
        are being worked out) and refills it, and the user's place in it stays."""
        if self.table.rowCount():
            header = self.table.horizontalHeader()
            self._place = ((self.table.horizontalScrollBar().value(), self.table.verticalScrollBar().value()),
                           (header.sortIndicatorSection(), header.sortIndicatorOrder()))

    def csv(self) -> str:
        return to_csv(self.rows)

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.csv())

    def _on_export(self) -> None:
        path = file_dialogs.save_file(self, "export", "Export statistics", "statistics.csv", "CSV (*.csv)")
        if path:
            try:
                write_text(path, self.csv())
            except WriteError as exc:
                QMessageBox.warning(self, "Export statistics", str(exc))
