"""The Evaluation window's chart: one bar per method for one metric's number (its mean over the images), with the
summary's interval (95 % by default) as an error bar; a method with no interval (one image) has a bar only."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg

BAR = "#4c78a8"
WHISKER = "#e8e8e8"  # light on the plots' dark ground


class SummaryChart(pg.PlotWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setMenuEnabled(False)
        self.setMouseEnabled(x=False, y=False)
        self.hideButtons()
        self.bars = pg.BarGraphItem(x=[], height=[], width=0.6, brush=BAR)
        self.whiskers = pg.ErrorBarItem(x=np.zeros(0), y=np.zeros(0), beam=0.2, pen=pg.mkPen(WHISKER, width=2))
        self.addItem(self.bars)
        self.addItem(self.whiskers)
        self.getAxis("left").enableAutoSIPrefix(False)  # an AUC as it is, not "(x0.001)"
        self.setMinimumHeight(160)
        self.shown: list[tuple[str, float, float, float]] = []  # (method, mean, low, high) of each bar

    def show_rows(self, rows: list[dict], label: str) -> None:
        """A bar per row of the summary (method, mean, ci_low, ci_high; None or NaN where undefined), left to right
        in the rows' order; `label` names the value axis."""
        self.shown = [(r["method"], _number(r["mean"]), _number(r["ci_low"]), _number(r["ci_high"])) for r in rows]
        x = np.arange(len(self.shown), dtype=float)
        mean = np.array([m for _, m, _, _ in self.shown], float)
        low = np.array([lo for _, _, lo, _ in self.shown], float)
        high = np.array([hi for _, _, _, hi in self.shown], float)
        has = np.isfinite(mean)
        self.bars.setOpts(x=x[has], height=mean[has], width=0.6)
        whole = has & np.isfinite(low) & np.isfinite(high)
        self.whiskers.setData(x=x[whole], y=mean[whole], top=(high - mean)[whole], bottom=(mean - low)[whole],
                              beam=0.2)
        self.getAxis("bottom").setTicks([[(i, name) for i, (name, *_rest) in enumerate(self.shown)], []])
        self.setLabel("left", label)
        ends = np.concatenate([mean[has], high[whole], low[whole], [0.0]])
        top, bottom = float(ends.max()), float(ends.min())
        room = 0.06 * ((top - bottom) or 1.0)
        self.setXRange(-0.6, max(len(self.shown) - 0.4, 0.6), padding=0)
        self.setYRange(bottom - (room if bottom < 0 else 0.0), top + room, padding=0)

    def clear_rows(self) -> None:
        self.shown = []
        self.bars.setOpts(x=[], height=[])
        self.whiskers.setData(x=np.zeros(0), y=np.zeros(0), top=np.zeros(0), bottom=np.zeros(0))
        self.getAxis("bottom").setTicks([[], []])


def _number(value) -> float:
    return math.nan if value is None else float(value)
