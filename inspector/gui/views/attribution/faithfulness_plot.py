"""Deletion and insertion curves under an attribution map: the target's score against the fraction of
pixels deleted (replaced by the baseline) or inserted (from the input into the baseline), AUC in the legend."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from ...common.heat_colours import FAITHFULNESS_COLOURS

COLOURS = FAITHFULNESS_COLOURS


def axis_label(score_of: str) -> str:
    """The curves' vertical axis, in plain words, from what a Curve's scores are."""
    if score_of.startswith("probability"):
        return "p(class)"
    if score_of.startswith("the score of"):
        return "box score"
    return "objective"


class FaithfulnessPlot(pg.PlotWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setMaximumHeight(150)
        self.setMinimumHeight(110)
        plot = self.getPlotItem()
        plot.setLabel("bottom", "fraction of pixels, hottest first")
        plot.getAxis("left").enableAutoSIPrefix(False)  # scores of 0..1 read as they are, never "x0.001"
        plot.setMenuEnabled(False)
        plot.showGrid(x=True, y=True, alpha=0.2)
        self.legend = plot.addLegend(offset=(-10, 5), brush=(0, 0, 0, 170))  # readable over the curves
        self.lines: dict[str, pg.PlotDataItem] = {}
        self.setVisible(False)

    def show_curves(self, curves) -> None:
        """Draw each Curve (inspector.core.attribution.scores.faithfulness); none hides the plot."""
        self.clear_curves()
        if not curves:
            return
        plot = self.getPlotItem()
        for curve in curves:
            x = np.linspace(0.0, 1.0, len(curve.scores))
            self.lines[curve.metric] = plot.plot(x, curve.scores, pen=pg.mkPen(COLOURS.get(curve.metric, "w"), width=2),
                                                 name=f"{curve.metric} (AUC {curve.auc:.3f})")
        plot.setLabel("left", axis_label(curve.score_of))
        if curve.order:
            plot.setLabel("bottom", f"fraction of pixels: {curve.order} (as drawn)")
        self.setVisible(True)

    def clear_curves(self) -> None:  # not `clear`: PlotWidget sets its plot item's clear on each instance
        self.getPlotItem().clear()
        self.legend.clear()
        self.lines = {}
        self.setVisible(False)
