"""The app's colour bars: pyqtgraph's ColorBarItem, its numbers always beside it (issue 41, item 16).

pyqtgraph gives a vertical colour bar's numbers a fixed 45 pixels and drops every label wider than that: a
gradient of a few millionths is labelled "-2e-06", "2e-06", ..., which in a 10- or 11-point font is wider, so
only "0" was left. Here the numbers' column is as wide as its widest label in the font in use."""

from __future__ import annotations

import pyqtgraph as pg


def colour_bar(values: tuple[float, float], colour_map: pg.ColorMap, width: int,
               interactive: bool = False) -> pg.ColorBarItem:
    """A vertical colour bar `width` pixels wide over `values` (low, high), its tick labels never dropped for
    want of room beside it."""
    bar = pg.ColorBarItem(values=values, colorMap=colour_map, width=width, interactive=interactive)
    bar.axis.setWidth(None)  # as wide as the labels drawn (pyqtgraph's 45 pixels dropped the wider ones)
    return bar
