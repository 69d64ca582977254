"""Attribution maps overlaid on the input as the model sees it: a colour bar in the map's own
units, the top of the range clipped at a percentile (a control; a few huge saliency pixels no
longer wash the map out), and an opacity slider."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QHBoxLayout, QLabel, QPushButton, QSlider, QVBoxLayout, QWidget

from inspector.core.clipping import clip_levels, magnitude
from inspector.core.records.requests import ATTRIBUTION_METHODS as METHODS

from ..controls import searchable


def heat_colormap() -> pg.ColorMap:
    """Jet-like colours whose opacity grows with the value: low attribution leaves the picture clear."""
    pos = np.array([0.0, 0.125, 0.375, 0.625, 0.875, 1.0])
    rgb = np.array([[0, 0, 128], [0, 0, 255], [0, 255, 255], [255, 255, 0], [255, 0, 0], [128, 0, 0]])
    alpha = np.clip(pos * 1.6, 0, 1) * 255
    return pg.ColorMap(pos, np.column_stack([rgb, alpha]).astype(np.ubyte))


class AttributionView(QWidget):
    """Signals
    -------
    sigRequested(str, str, object): method, target, layer (None = found automatically).
    """

    sigRequested = Signal(str, str, object)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.method = QComboBox()
        self.method.addItems(list(METHODS))
        self.method.setCurrentText("gradcam")
        self.layer = searchable(QComboBox())
        self.layer.addItem("auto (last conv)", None)
        self.target = searchable(QComboBox())
        self.target.addItem("target of the run", "")
        self.opacity = QSlider(Qt.Horizontal)
        self.opacity.setRange(0, 100)
        self.opacity.setValue(50)
        self.opacity.setMinimumWidth(160)
        self.percentile = QDoubleSpinBox()
        self.percentile.setRange(50.0, 100.0)
        self.percentile.setSingleStep(0.5)
        self.percentile.setDecimals(1)
        self.percentile.setValue(99.0)
        self.percentile.setToolTip("Colours top out at this percentile of the map (100: its largest value)")
        self.compute = QPushButton("Compute")
        self.caption = QLabel("Pick a method and press Compute.")
        self.caption.setWordWrap(True)
        self.canvas = pg.GraphicsLayoutWidget()
        self.view = self.canvas.addViewBox(lockAspect=True, invertY=True)
        self.view.setMenuEnabled(False)
        self.picture = pg.ImageItem(axisOrder="row-major")
        self.heat = pg.ImageItem(axisOrder="row-major")
        self.view.addItem(self.picture)
        self.view.addItem(self.heat)
        self.colorbar = pg.ColorBarItem(values=(0, 1), colorMap=heat_colormap(), width=14, interactive=False)
        self.colorbar.setImageItem(self.heat)
        self.canvas.addItem(self.colorbar, row=0, col=1)
        self.map: np.ndarray | None = None
        self.values: np.ndarray | None = None  # the (H, W) magnitude drawn
        row, display = QHBoxLayout(), QHBoxLayout()  # what to compute; how to show it
        for label, widget in (("Method", self.method), ("Layer", self.layer), ("Class", self.target)):
            row.addWidget(QLabel(label))
            row.addWidget(widget, 0 if widget is self.method else 1)
        row.addWidget(self.compute)
        for label, widget in (("Clip colours at percentile", self.percentile), ("Opacity", self.opacity)):
            display.addWidget(QLabel(label))
            display.addWidget(widget)
        display.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addLayout(display)
        layout.addWidget(self.canvas, 1)
        layout.addWidget(self.caption)
        self.compute.clicked.connect(self._on_compute)
        self.opacity.valueChanged.connect(lambda v: self.heat.setOpacity(v / 100))
        self.percentile.valueChanged.connect(lambda _v: self._apply_levels())
        self.heat.setOpacity(0.5)

    def set_choices(self, conv_layers: list[str], predictions) -> None:
        keep_layer, keep_target = self.layer.currentData(), self.target.currentData()
        self.layer.clear()
        self.layer.addItem("auto (last conv)", None)
        for path in conv_layers:
            self.layer.addItem(path, path)
        self.target.clear()
        self.target.addItem("target of the run", "")
        for p in predictions:
            self.target.addItem(f"{p.label} ({p.index}) {p.probability:.1%}", str(p.index))
        for combo, keep in ((self.layer, keep_layer), (self.target, keep_target)):
            i = combo.findData(keep)
            combo.setCurrentIndex(max(i, 0))

    def _on_compute(self) -> None:
        method = self.method.currentText()
        self.caption.setText(f"Computing {method}…")
        self.sigRequested.emit(method, self.target.currentData() or "", self.layer.currentData())

    def show_attribution(self, picture: np.ndarray | None, found, labels) -> None:
        self.map = found.map
        self.values = magnitude(found.map)
        if picture is not None and picture.shape[:2] == self.values.shape:
            self.picture.setImage(picture, autoLevels=False, levels=(0, 255))
        else:
            self.picture.clear()
        self.heat.setImage(self.values, autoLevels=False, levels=clip_levels(self.values, self.percentile.value()))
        self._apply_levels()
        self.view.autoRange(padding=0.01)
        what = found.target if found.target_index is None else (
            f"class {found.target_index}" + (f" ({labels[found.target_index]})" if labels else ""))
        notes = [f"{found.method} for {what}"]
        if found.layer:
            notes.append(f"layer {found.layer}")
        if found.approximated:
            notes.append(f"approximate rule at {len(found.approximated)} non-ReLU activation(s)")
        if found.unreached:
            notes.append("not reached (functional calls): " + "; ".join(found.unreached))
        notes += list(found.warnings)
        self.caption.setText(" · ".join(notes))

    def _apply_levels(self) -> None:
        """Colours from the map's smallest value to its chosen percentile (the colour bar says which)."""
        if self.values is not None:
            self.colorbar.setLevels(clip_levels(self.values, self.percentile.value()))

    def show_error(self, message: str) -> None:
        self.caption.setText(f"<span style='color:#b00'>{message}</span>")
