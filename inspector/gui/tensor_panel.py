"""One panel for one capture: all channels as a single mosaic image, a histogram, statistics.

Conv maps are tiled into one pyqtgraph ImageItem (C-contiguous float32, explicit levels)
with a HistogramLUT colour bar; gradients use a diverging map centred on zero. Vectors
(Linear outputs) are drawn as bars, token x feature outputs as one image. Hover shows the
channel and value; a click enlarges a channel and emits sigChannelClicked.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QStackedWidget, QVBoxLayout, QWidget

from inspector.core.mosaic import Mosaic, as_maps, levels, make_mosaic
from inspector.core.stats import TensorStats

_MAPS = {True: "CET-D1", False: "viridis"}


def colormap(name: str, stops: int = 9) -> pg.ColorMap:
    """A named colour map resampled to a few stops (the LUT is still interpolated smoothly)."""
    full = pg.colormap.get(name)
    positions = np.linspace(0.0, 1.0, stops)
    return pg.ColorMap(positions, full.map(positions))


def format_stats(stats: TensorStats | None) -> str:
    if stats is None:
        return ""
    shape = "×".join(map(str, stats.shape))
    text = (f"{shape} {stats.dtype}   mean {stats.mean:.4g}   std {stats.std:.4g}   "
            f"min {stats.min:.4g}   max {stats.max:.4g}   zeros {stats.zero_fraction:.1%}   L2 {stats.l2:.4g}")
    if stats.nan or stats.inf:
        text += f"   NaN {stats.nan}  Inf {stats.inf}"
    return text


def histogram(array: np.ndarray, bins: int = 64) -> tuple[np.ndarray, np.ndarray]:
    flat = np.asarray(array).reshape(-1)
    if flat.size > 65536:
        flat = flat[:: flat.size // 65536]
    flat = flat[np.isfinite(flat)]
    if flat.size == 0:
        return np.zeros(bins), np.linspace(0, 1, bins + 1)
    return np.histogram(flat, bins=bins)


class TensorPanel(QWidget):
    """Signals
    -------
    sigChannelClicked(int): the user clicked a channel of the mosaic.
    """

    sigChannelClicked = Signal(int)

    def __init__(self, title: str, diverging: bool, parent=None) -> None:
        super().__init__(parent)
        self.diverging = diverging
        self.mosaic: Mosaic | None = None
        self.maps: np.ndarray | None = None
        self.key = ""
        self.title = QLabel(f"<b>{title}</b>")
        self.hover = QLabel(" ")
        self.stats = QLabel(" ")
        self.stats.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.stats.setWordWrap(True)

        self.canvas = pg.GraphicsLayoutWidget()
        self.view = self.canvas.addViewBox(row=0, col=0, lockAspect=True, invertY=True)
        self.view.setMenuEnabled(False)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.view.addItem(self.image)
        self.lut = pg.HistogramLUTItem(image=self.image, fillHistogram=False)
        self.lut.gradient.setColorMap(colormap(_MAPS[diverging]))
        self.lut.gradient.showTicks(False)  # hundreds of stop ticks cost more to paint than the image
        self.canvas.addItem(self.lut, row=0, col=1)
        self.zoom_canvas = pg.GraphicsLayoutWidget()
        self.zoom_canvas.setFixedSize(130, 130)
        self.zoom_view = self.zoom_canvas.addViewBox(lockAspect=True, invertY=True)
        self.zoom_view.setMenuEnabled(False)
        self.zoom_image = pg.ImageItem(axisOrder="row-major")
        self.zoom_view.addItem(self.zoom_image)
        self.canvas.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.canvas.scene().sigMouseClicked.connect(self._on_mouse_clicked)

        self.bars = pg.PlotWidget()
        self.bar_item = pg.BarGraphItem(x=[], height=[], width=0.8, brush="#4c78a8")
        self.bars.addItem(self.bar_item)
        self.bars.setLabel("bottom", "feature")
        self.stack = QStackedWidget()
        self.stack.addWidget(self.canvas)
        self.stack.addWidget(self.bars)

        self.hist = pg.PlotWidget()
        self.hist.setFixedHeight(130)
        self.hist_curve = self.hist.plot(stepMode="center", fillLevel=0, brush=(76, 120, 168, 150))
        self.hist.setLabel("bottom", "value")

        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.title)
        layout.addWidget(self.stack, 1)
        row = QHBoxLayout()
        row.addWidget(self.zoom_canvas)
        row.addWidget(self.hist, 1)
        layout.addLayout(row)
        layout.addWidget(self.stats)
        layout.addWidget(self.hover)

    # -- updates -------------------------------------------------------------------
    def clear(self, message: str = "") -> None:
        self.key, self.mosaic, self.maps = "", None, None
        self.image.clear()
        self.zoom_image.clear()
        self.bar_item.setOpts(x=[], height=[])
        self.hist_curve.setData([], [])
        self.stats.setText(message or " ")
        self.hover.setText(" ")

    def show_capture(self, key: str, array: np.ndarray, stats: TensorStats | None) -> None:
        self.key = key
        self.title.setText(f"<b>{key}</b>")
        array = np.asarray(array)
        if array.ndim <= 2:
            self._show_vector(array)
        else:
            self._show_maps(array)
        counts, edges = histogram(array)
        self.hist_curve.setData(edges, counts)
        self.stats.setText(format_stats(stats))

    def _show_maps(self, array: np.ndarray) -> None:
        self.stack.setCurrentWidget(self.canvas)
        self.maps = as_maps(array)
        self.mosaic = make_mosaic(array)
        lo, hi = levels(self.mosaic.image, self.diverging)
        self.image.setImage(self.mosaic.image, levels=(lo, hi), autoLevels=False)
        self.lut.setLevels(lo, hi)
        self.view.autoRange(padding=0.01)
        self._zoom(0)

    def _show_vector(self, array: np.ndarray) -> None:
        self.stack.setCurrentWidget(self.bars)
        self.mosaic, self.maps = None, None
        values = np.asarray(array, dtype=np.float32).reshape(array.shape[0] if array.ndim == 2 else 1, -1)[0]
        x = np.arange(values.size)
        height = np.nan_to_num(values)
        if values.size <= 512:
            brushes = [pg.mkBrush("#d62728" if v < 0 else "#4c78a8") for v in height]
            self.bar_item.setOpts(x=x, height=height, width=0.8, brushes=brushes)
        else:
            self.bar_item.setOpts(x=x, height=height, width=1.0, brushes=None, brush="#4c78a8")
        self.bars.enableAutoRange()

    def _zoom(self, channel: int) -> None:
        if self.maps is None or not 0 <= channel < len(self.maps):
            return
        tile = np.ascontiguousarray(self.maps[channel], dtype=np.float32)
        lo, hi = self.image.levels if self.image.levels is not None else (0.0, 1.0)
        self.zoom_image.setImage(tile, levels=(lo, hi), autoLevels=False)
        self.zoom_image.setLookupTable(self.lut.getLookupTable(n=256))  # cached until the gradient changes
        self.zoom_view.autoRange(padding=0.02)

    # -- mouse ------------------------------------------------------------------
    def _channel_under(self, scene_pos):
        if self.mosaic is None or not self.view.sceneBoundingRect().contains(scene_pos):
            return None
        point = self.view.mapSceneToView(scene_pos)
        return self.mosaic.channel_at(point.y(), point.x())

    def _on_mouse_moved(self, scene_pos) -> None:
        hit = self._channel_under(scene_pos)
        if hit is None:
            return
        channel, y, x = hit
        value = float(self.maps[channel, y, x])
        self.hover.setText(f"channel {channel}   ({y}, {x})   value {value:.5g}")

    def _on_mouse_clicked(self, event) -> None:
        hit = self._channel_under(event.scenePos())
        if hit is None:
            return
        self._zoom(hit[0])
        self.sigChannelClicked.emit(hit[0])
