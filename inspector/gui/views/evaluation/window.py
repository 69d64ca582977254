"""The Evaluation window (Attribution > Evaluate…): the job's buttons and progress (Open…, Evaluate…, Cancel, the
images done and the time left), then a finished evaluation's summary: what it was (model, images, protocol), a table
with a row per method and metric (the mean, its interval, n) and a bar chart of one metric (a bar per method, the
interval as an error bar), the metric chosen above it. It draws what it is given and says what the user did."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.core.evaluate.metrics import METRIC_ROWS

from ..folder_job import FolderJobControls
from .chart import SummaryChart

COLUMNS = ("Method", "Metric", "Mean", "interval", "n")


def number(value) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:.4f}"


def measure(row: dict) -> str:
    """A row's metric and number as the table and the chooser name them ("deletion auc")."""
    return f"{row['metric']} {row['number']}"


class EvaluationWindow(FolderJobControls, QWidget):
    """Signals
    -------
    sigOpen(): Open… was pressed (choose a folder an evaluation was written to).
    sigBuild(): Evaluate… was pressed.
    sigCancel(): Cancel was pressed.
    """

    sigOpen = Signal()
    sigBuild = Signal()
    sigCancel = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent, Qt.Window)
        self.setWindowTitle("Evaluation")
        layout = self._job_layout("Open evaluation…", "Show an evaluation written before (a folder with "
                                  "summary.json, by Evaluate… or network-inspector evaluate)",
                                  "Evaluate methods over a folder of images on the loaded model", "images",
                                  words=True)
        layout.setContentsMargins(8, 8, 8, 8)  # (a window of its own, not a dock)
        self.build_button.setText("Evaluate…")
        self.open_button.clicked.connect(self.sigOpen.emit)
        self.build_button.clicked.connect(self.sigBuild.emit)
        self.message = QLabel("", wordWrap=True)
        self.message.setVisible(False)
        self.head = QLabel("No evaluation shown yet: Evaluate… runs one, Open evaluation… shows one written "
                           "before.", wordWrap=True)
        self.head.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeToContents)
        self.measure = QComboBox()
        self.measure.setToolTip("The metric the chart shows, a bar per method")
        self.measure.currentTextChanged.connect(lambda _text: self._draw_chart())
        self.measure_help = QLabel("", wordWrap=True)
        self.measure_help.setStyleSheet("color: #555;")
        self.chart = SummaryChart()
        chart_side = QWidget()
        side = QVBoxLayout(chart_side)
        side.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel("Chart of"))
        row.addWidget(self.measure, 1)
        side.addLayout(row)
        side.addWidget(self.measure_help)
        side.addWidget(self.chart, 1)
        self.split = QSplitter(Qt.Horizontal)
        self.split.addWidget(self.table)
        self.split.addWidget(chart_side)
        self.split.setStretchFactor(0, 3)
        self.split.setStretchFactor(1, 2)
        layout.addWidget(self.message)
        layout.addWidget(self.head)
        layout.addWidget(self.split, 1)
        layout.addStretch(0)  # (the room under the lines while no summary is shown)
        self.split.setVisible(False)  # until a summary is shown
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.summary: dict | None = None
        self.folder = ""

    # -- what the state says -------------------------------------------------------------------------
    def say(self, text: str, error: bool = False) -> None:
        self.message.setText(text)
        self.message.setStyleSheet("color: #b00;" if error else "")
        self.message.setVisible(bool(text))

    def show_summary(self, folder: str, summary: dict) -> None:
        """The evaluation in `folder` (summary.json's content): its line, the table and the chart."""
        self.summary, self.folder = summary, folder
        settings = summary.get("settings") or {}
        steps = f", {settings['steps']} steps" if settings.get("steps") is not None else ""
        confidence = summary.get("confidence", 0.95)
        skipped = len(summary.get("skipped") or ())
        self.head.setText(f"{summary.get('model')} ({summary.get('weights')}) on {summary.get('images')} images "
                          f"({skipped} skipped) of {summary.get('data')}; protocol {settings.get('protocol')}{steps}; "
                          f"mean and its {confidence:.0%} interval. Files: {folder}")
        rows = summary["summary"]
        self.table.setHorizontalHeaderLabels([f"{confidence:.0%} interval" if c == "interval" else c
                                              for c in COLUMNS])
        self.table.setRowCount(len(rows))
        for i, r in enumerate(rows):
            cells = (r["method"], measure(r), number(r["mean"]), f"[{number(r['ci_low'])}, {number(r['ci_high'])}]",
                     str(r["n"]))
            for j, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if j >= 2:
                    item.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
                item.setData(Qt.UserRole, r)
                self.table.setItem(i, j, item)
        measures = list(dict.fromkeys(measure(r) for r in rows))
        keep = self.measure.currentText()
        self.measure.blockSignals(True)
        self.measure.clear()
        self.measure.addItems(measures)
        self.measure.setCurrentIndex(max(self.measure.findText(keep), 0))
        self.measure.blockSignals(False)
        self._draw_chart()
        self.split.setVisible(True)
        self._fit_table()

    def _fit_table(self) -> None:
        """The table as wide as its columns (no column cut, no scroll bar across), the chart the rest."""
        table = self.table
        table.resizeColumnsToContents()
        need = table.horizontalHeader().length() + 2 * table.frameWidth() + table.verticalScrollBar().sizeHint().width()
        whole = sum(self.split.sizes()) or self.split.width()
        self.split.setSizes([need, max(whole - need, 1)])

    def shown_rows(self) -> list[dict]:
        """The rows the table shows, read back from it (what a test compares with the files)."""
        return [self.table.item(i, 0).data(Qt.UserRole) for i in range(self.table.rowCount())]

    def _draw_chart(self) -> None:
        chosen = self.measure.currentText()
        if self.summary is None or not chosen:
            self.chart.clear_rows()
            return
        rows = [r for r in self.summary["summary"] if measure(r) == chosen]
        metric = METRIC_ROWS.get(rows[0]["metric"]) if rows else None
        self.measure_help.setText(f"{chosen}: {metric.help}" if metric is not None and metric.help else chosen)
        self.chart.show_rows(rows, chosen)
