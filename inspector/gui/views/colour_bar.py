"""The app's colour bars: pyqtgraph's ColorBarItem, its numbers always beside it (issue 41, item 16), and one
number only where every value is the same (`say_constant`).

pyqtgraph gives a vertical colour bar's numbers a fixed 45 pixels and drops every label wider than that: a
gradient of a few millionths is labelled "-2e-06", "2e-06", ..., which in a 10- or 11-point font is wider, so
only "0" was left. Here the numbers' column is as wide as its widest label in the font in use."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg


def colour_bar(values: tuple[float, float], colour_map: pg.ColorMap, width: int,
               interactive: bool = False) -> pg.ColorBarItem:
    """A vertical colour bar `width` pixels wide over `values` (low, high), its tick labels never dropped for
    want of room beside it."""
    bar = pg.ColorBarItem(values=values, colorMap=colour_map, width=width, interactive=interactive)
    bar.axis.setWidth(None)  # as wide as the labels drawn (pyqtgraph's 45 pixels dropped the wider ones)
    return bar


def constant_value(values: np.ndarray) -> float | None:
    """The one value every finite entry of `values` has (None: they differ, or none is finite).
    Two different finite values among a strided sample of 4096 settle it without reading the rest (a panel's
    64 maps of 112x112: 0.9 ms of its turn for the whole, most of them not constant)."""
    values = np.asarray(values)
    if values.size > 8192:
        sample = values.flat[:: values.size // 4096]  # a copy of the sample only, contiguous or not
        sample = sample[np.isfinite(sample)]
        if sample.size and sample.min() != sample.max():
            return None
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return None
    low, high = float(finite.min()), float(finite.max())
    return low if low == high else None


def say_constant(bar: pg.ColorBarItem, value: float | None) -> None:
    """Label `bar` with `value` alone ("all 0") where every value is that one; None: the numbers of its range.
    An all-zero gradient was drawn under a bar from -1 to 1, numbers no value had."""
    bar.axis.setTicks(None if value is None else [[(value, f"all {value:.4g}")]])
