"""The TensorPanel's plots besides the mosaic: a vector as bars, the values' histogram."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg


def histogram(array: np.ndarray, bins: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """Counts and edges over the finite values (a strided sample of at most ~65k)."""
    flat = np.asarray(array).reshape(-1)
    if flat.size > 65536:
        flat = flat[:: flat.size // 65536]
    flat = flat[np.isfinite(flat)]
    if flat.size == 0:
        return np.zeros(bins), np.linspace(0, 1, bins + 1)
    return np.histogram(flat, bins=bins)


class VectorBars(pg.PlotWidget):
    """One bar per feature of sample 0 (red below zero while there are few enough to colour)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.bar_item = pg.BarGraphItem(x=[], height=[], width=0.8, brush="#4c78a8")
        self.addItem(self.bar_item)
        self.setLabel("bottom", "feature")

    def show_values(self, array: np.ndarray) -> None:
        values = np.asarray(array, dtype=np.float32).reshape(array.shape[0] if array.ndim == 2 else 1, -1)[0]
        x = np.arange(values.size)
        height = np.nan_to_num(values)
        if values.size <= 512:
            brushes = [pg.mkBrush("#d62728" if v < 0 else "#4c78a8") for v in height]
            self.bar_item.setOpts(x=x, height=height, width=0.8, brushes=brushes)
        else:
            self.bar_item.setOpts(x=x, height=height, width=1.0, brushes=None, brush="#4c78a8")
        self.enableAutoRange()

    def clear_values(self) -> None:
        self.bar_item.setOpts(x=[], height=[])


class ZeroAxis(pg.AxisItem):
    """A value axis marked at zero only (when zero is in view): in the panel's narrow histogram the usual
    labels ran into each other ("-50" for -5 and 0); the statistics line under it gives min and max."""

    def tickValues(self, minVal, maxVal, size):
        return [(1.0, [0.0])] if minVal < 0.0 < maxVal else []

    def tickStrings(self, values, scale, spacing):
        return ["0" for _ in values]


class ValueHistogram(pg.PlotWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent, axisItems={"bottom": ZeroAxis("bottom")})
        self.setMinimumHeight(130)
        self.curve = self.plot(stepMode="center", fillLevel=0, brush=(76, 120, 168, 150))
        self.setLabel("bottom", "value")
        self.getAxis("bottom").enableAutoSIPrefix(False)  # no "(x0.01)": only 0 is marked
        # A fixed width for the counts' axis: labels of another width would lay the plot out (and
        # paint it) a second time on each update, many times a second with a live video.
        self.getAxis("left").setWidth(44)

    def show_values(self, array: np.ndarray) -> None:
        counts, edges = histogram(array)
        self.curve.setData(edges, counts)

    def clear_values(self) -> None:
        self.curve.setData([], [])
