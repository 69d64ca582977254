"""Divergence by depth: how far two models' captures differ, layer by layer in forward order.

The Gradient flow plot's layout: layers on the x axis (names shortened, hover for the full key
and values), a log y axis (relative L2 difference `||a - b|| / ||a||`), the threshold drawn
across and the first divergent layer marked with a vertical line, named in the legend above the
plot (a label on the line was drawn over the points). The y title is the longest of Y_TITLES that
fits the axis' height: the Compare tab gives the plot little of it.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QLabel, QVBoxLayout

from inspector.core.common.keys import parse_key

from ..layer_plot import LayerPlot, short_name
from ..number_format import fmt

FLOOR = 1e-10  # where identical captures (0) are drawn on the log axis
Y_TITLES = ("rel. L2 difference", "rel. L2 diff.", "rel. L2")  # longest first: the first that fits is shown
LEGEND = ('<span style="color:#4c78a8">● activation</span> (decides the first divergent) &nbsp; '
          '<span style="color:#f58518">▼ gradient</span> &nbsp; <span style="color:#999">··· threshold</span>')


def fitting_title(titles, width_of, room: float) -> str:
    """The first (longest) of `titles` whose `width_of(title)` fits in `room` pixels, else the last."""
    return next((t for t in titles if width_of(t) <= room), titles[-1])


def depth_rows(diff) -> list[tuple[int, str, object, object]]:
    """(depth, layer, activation row, gradient row) per layer call in forward order, as the gradient
    flow draws them: a layer's activation and gradient share one depth (either may be None), the
    input gradient is at the model's input (depth 0, `input`) and the model's output last."""
    layers: dict[str, list] = {}
    for row in sorted(diff.rows, key=lambda r: r.key != "input:grad"):
        # a layer call (`conv#1`), or the model's own `output`
        name = "input" if row.key == "input:grad" else str(parse_key(row.key).layer_call()) or row.key
        slot = layers.setdefault(name, [None, None])
        slot[0 if row.forward else 1] = slot[0 if row.forward else 1] or row
    return [(i, name, f, g) for i, (name, (f, g)) in enumerate(layers.items())]


PLOT_MIN_HEIGHT = 130  # the plot's least height (px): the mosaics above it scroll instead


class DivergenceView(LayerPlot):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.plot.setLabel("left", Y_TITLES[0])
        self.forward_curve = self.plot.plot(pen="#4c78a8", symbol="o", symbolSize=6, symbolBrush="#4c78a8")
        self.grad_curve = self.plot.plot(pen=pg.mkPen("#f58518", style=Qt.DashLine), symbol="t", symbolSize=6,
                                         symbolBrush="#f58518")
        # the legend above the plot, where it never hides a point; it names the first divergent layer too
        self.legend = QLabel(LEGEND)
        self.legend.setWordWrap(True)  # narrow beside the prediction table: wraps, never widens the tab
        self.threshold_line = pg.InfiniteLine(angle=0, pen=pg.mkPen((150, 150, 150), style=Qt.DotLine))
        self.first_line = pg.InfiniteLine(angle=90, pen=pg.mkPen("#e45756", width=2))
        self.plot.getAxis("left").geometryChanged.connect(self._fit_y_title)
        for item in (self.threshold_line, self.first_line):
            self.plot.addItem(item, ignoreBounds=True)
            item.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.plot.setMinimumHeight(PLOT_MIN_HEIGHT)  # 45 px at 1280x800 once the legend had wrapped
        layout.addWidget(self.legend)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.hover)
        self.depths: list = []
        self.diff = None

    def clear(self) -> None:
        self.diff, self.depths = None, []
        self.forward_curve.setData([], [])
        self.grad_curve.setData([], [])
        self.threshold_line.hide()
        self.first_line.hide()
        self.legend.setText(LEGEND)
        self._fit_legend()
        self.plot.getAxis("bottom").setTicks(None)
        self.hover.setText(" ")

    def show_diff(self, diff) -> None:
        """Plot a ModelDiff (inspector.core.compare.diff)."""
        self.diff = diff
        self.depths = depth_rows(diff)
        fwd = [(d, f.rel_l2) for d, _, f, _ in self.depths if f is not None]
        grd = [(d, g.rel_l2) for d, _, _, g in self.depths if g is not None]
        for curve, points in ((self.forward_curve, fwd), (self.grad_curve, grd)):
            ys = [max(v, FLOOR) if np.isfinite(v) else np.nan for _, v in points]
            curve.setData([d for d, _ in points], ys, connect="finite")
        self.threshold_line.setPos(np.log10(max(diff.threshold, FLOOR)))
        self.threshold_line.setVisible(diff.threshold > 0)
        first = next((d for d, name, f, _ in self.depths if f is not None and f.key == diff.first_divergent), None)
        self.first_line.setVisible(first is not None)
        self.legend.setText(LEGEND)
        if first is not None:
            self.first_line.setPos(first)
            self.legend.setText(f'{LEGEND} &nbsp; <span style="color:#e45756">│ first divergent: '
                                f'{short_name(diff.first_divergent, 28)}</span>')
        self._fit_legend()
        self._update_ticks()
        verdict = (f"First divergent: {diff.first_divergent}" if diff.first_divergent
                   else f"No activation differs by more than {fmt(diff.threshold)} (relative L2).")
        self.hover.setText(verdict)

    def layers(self) -> list[tuple[float, str]]:
        return [(depth, name) for depth, name, _, _ in self.depths]

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_legend()

    def _fit_legend(self) -> None:
        """The legend as tall as its lines wrapped at this width: the layout then keeps the plot under it and the
        line under the plot (a wrapped legend counted one line high let the plot cover that line)."""
        height = self.legend.heightForWidth(self.width())
        if height > 0 and height != self.legend.minimumHeight():
            self.legend.setMinimumHeight(height)

    def _fit_y_title(self) -> None:
        """The longest y title that the left axis' height holds (a longer one was cut: "rel. L2 differen")."""
        axis = self.plot.getAxis("left")
        metrics = QFontMetrics(axis.label.font())
        title = fitting_title(Y_TITLES, lambda t: metrics.horizontalAdvance(t) + 4, axis.geometry().height())
        if title != axis.labelText:
            self.plot.setLabel("left", title)

    def text_at(self, x: float) -> str | None:
        """The hover text for the layer drawn at depth x (within half a step)."""
        if not self.depths:
            return None
        depth, name, f, g = min(self.depths, key=lambda r: abs(r[0] - x))
        if abs(depth - x) > 0.5:
            return None
        return "   ".join(f"{row.key}: rel L2 {fmt(row.rel_l2)}, cosine {fmt(row.cosine, '.6f')}, "
                           f"max |diff| {fmt(row.max_abs)}" for row in (f, g) if row is not None)
