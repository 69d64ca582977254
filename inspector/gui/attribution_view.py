"""Attribution maps overlaid on the input as the model sees it, with an opacity control."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QSlider, QVBoxLayout, QWidget

from inspector.core.attribution import METHODS
from inspector.core.export import heat_values, jet

from .controls import searchable


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
        self.map: np.ndarray | None = None
        row = QHBoxLayout()
        for label, widget in (("Method", self.method), ("Layer", self.layer), ("Class", self.target),
                              ("Opacity", self.opacity)):
            row.addWidget(QLabel(label))
            row.addWidget(widget, 1 if widget is not self.opacity else 0)
        row.addWidget(self.compute)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.canvas, 1)
        layout.addWidget(self.caption)
        self.compute.clicked.connect(self._on_compute)
        self.opacity.valueChanged.connect(lambda v: self.heat.setOpacity(v / 100))
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
        values = heat_values(found.map)
        rgba = np.dstack([jet(values), (values * 255).astype(np.uint8)])
        if picture is not None and picture.shape[:2] == values.shape:
            self.picture.setImage(picture, autoLevels=False, levels=(0, 255))
        else:
            self.picture.clear()
        self.heat.setImage(rgba, autoLevels=False, levels=(0, 255))
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

    def show_error(self, message: str) -> None:
        self.caption.setText(f"<span style='color:#b00'>{message}</span>")
