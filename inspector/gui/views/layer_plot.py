"""A plot along the layers in forward order, log y: the gradient flow and the two models' divergence by depth.

The x axis names the layers (shortened, as many as fit side by side always drawn, the rest where there is room),
and the line under the plot says the layer under the pointer in full with its values.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QLabel, QWidget

from inspector.core.common.errors import SpecError
from inspector.core.common.keys import LayerCall, parse_key

MAX_LABELS = 12  # names always drawn on the x axis; the others only where there is room


def short_name(key: str, limit: int = 16) -> str:
    """`layer4.2.conv3:grad_output` -> `…2.conv3`: the last parts of the path that fit in `limit`
    characters (the site dropped; a further call's `#k` kept)."""
    path = key.partition(":")[0]
    try:
        call = str(LayerCall("", parse_key(key).call))  # `#k` of a further call, "" for the first
    except SpecError:
        call = ""
    parts = (path or key).split(".")
    out = parts[-1]
    for part in reversed(parts[:-1]):
        if len(part) + 1 + len(out) > limit:
            break
        out = f"{part}.{out}"
    return ("" if out == (path or key) else "…") + out + call


def layer_ticks(depths, keys, max_labels: int = MAX_LABELS) -> list[list[tuple[float, str]]]:
    """Two tick levels for AxisItem.setTicks: every k-th name (at most `max_labels`, always
    drawn), then the rest (drawn where there is room). A layer is named once, however many of its gradients."""
    named: dict[float, str] = {}
    for d, k in zip(depths, keys):
        named.setdefault(float(d), short_name(k))
    ticks = list(named.items())
    step = max(1, -(-len(ticks) // max(1, max_labels)))
    return [ticks[::step], [t for i, t in enumerate(ticks) if i % step]]


class LayerPlot(QWidget):
    """`plot` (log y, the layers' depths along x) and `hover` (the line saying the layer under the pointer); a
    subclass lays them out and says which layers are drawn (`layers()`) and what the one at a depth reads
    (`text_at()`)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.plot = pg.PlotWidget()
        self.plot.setLogMode(y=True)
        self.plot.setLabel("bottom", "layer (forward order)")
        self.plot.getAxis("left").enableAutoSIPrefix(False)
        self.plot.showGrid(y=True, alpha=0.2)
        self.hover = QLabel(" ")
        self.hover.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.plot.scene().sigMouseMoved.connect(self._on_mouse_moved)

    def layers(self) -> list[tuple[float, str]]:
        """(depth, key) of each layer drawn, in forward order."""
        raise NotImplementedError

    def text_at(self, x: float) -> str | None:
        """What the layer drawn at depth x (within half a step) reads, or None where there is none."""
        raise NotImplementedError

    def labels_that_fit(self) -> int:
        """How many layer names fit side by side under the plot at its current width."""
        drawn = self.layers()
        if not drawn:
            return MAX_LABELS
        metrics = QFontMetrics(self.plot.getAxis("bottom").style.get("tickFont") or self.plot.font())
        widest = max(metrics.horizontalAdvance(short_name(key)) for _, key in drawn) + 16
        return max(2, min(MAX_LABELS, int((self.plot.width() - 70) // widest)))

    def _update_ticks(self) -> None:
        drawn = self.layers()
        if drawn:
            ticks = layer_ticks([d for d, _ in drawn], [key for _, key in drawn], self.labels_that_fit())
            self.plot.getAxis("bottom").setTicks(ticks)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._update_ticks()

    def _on_mouse_moved(self, scene_pos) -> None:
        vb = self.plot.getPlotItem().getViewBox()
        if not vb.sceneBoundingRect().contains(scene_pos):
            return
        text = self.text_at(vb.mapSceneToView(scene_pos).x())
        if text is not None:
            self.hover.setText(text)
