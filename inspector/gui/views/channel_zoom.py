"""One channel enlarged: its map at the mosaic's levels and colours, labelled with key, channel, range.

A real image view: the wheel zooms about the cursor, a drag pans, a double click fits the map
again. The pixel under the cursor is reported (sigMoved) so that the panel can read it out and
mark the same pixel on the other side (`mark`). A spatial map can be laid over the input picture
(`set_backdrop`), stretched over it, at the opacity of the slider below.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QGraphicsRectItem,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from .number_format import breakable, fmt, keep_pairs

MIN_MAP_HEIGHT = 60  # the enlarged map's least height (TensorPanel gives it more wherever there is room)


def describe(key: str, noun: str, channel: int, tile: np.ndarray) -> str:
    """"key · channel 3 · min … max …" over the tile's finite values."""
    finite = tile[np.isfinite(tile)]
    text = f"{key} · {noun} {channel}"
    if finite.size == 0:
        return text + " · no finite values"
    return text + f" · min {fmt(finite.min())} · max {fmt(finite.max())}"


class ChannelZoom(QWidget):
    """Signals
    -------
    sigMoved(object): (y, x), the tile's pixel under the mouse, or None when the mouse left the map.
    """

    sigMoved = Signal(object)

    def __init__(self, size: int = 170, parent=None) -> None:
        super().__init__(parent)
        self.label = QLabel(" ")
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)  # a long key never widens the panel
        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.setMinimumSize(size, MIN_MAP_HEIGHT)  # a short panel shrinks the map, never onto its overlay row
        self.canvas.setToolTip("Wheel: zoom · drag: pan · double click: fit")
        self.setMaximumWidth(int(size * 1.4))
        self.view = self.canvas.addViewBox(lockAspect=True, invertY=True)
        self.view.setMenuEnabled(False)
        self.backdrop = pg.ImageItem(axisOrder="row-major")  # the input picture, under the map
        self.backdrop.setZValue(-1)
        self.backdrop.setVisible(False)
        self.view.addItem(self.backdrop)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.view.addItem(self.image)
        self.marker = QGraphicsRectItem()  # the pixel under a cursor, here or on the other side
        self.marker.setPen(pg.mkPen("#00e5ff", width=2))  # cosmetic: 2 screen pixels at any zoom
        self.marker.setZValue(10)
        self.marker.setVisible(False)
        self.view.addItem(self.marker, ignoreBounds=True)
        self.on_input = QCheckBox("on input")
        self.on_input.setToolTip("Lay this map over the input picture (stretched over it)")
        self.on_input.setEnabled(False)
        self.opacity = QSlider(Qt.Horizontal)
        self.opacity.setRange(0, 100)
        self.opacity.setValue(60)
        self.opacity.setToolTip("Opacity of the map over the input")
        self.opacity.setEnabled(False)
        self.on_input.toggled.connect(self._overlay)
        self.opacity.valueChanged.connect(self._overlay)
        self._framed = None  # the tile shape the view was last fitted to
        self._tile: np.ndarray | None = None
        self._spatial = False  # the tile is a map of the input's area (not weights, not a matrix)
        self._picture: np.ndarray | None = None  # (H, W, 3) uint8: the input as the model sees it
        self.canvas.scene().sigMouseMoved.connect(self._on_moved)
        self.canvas.scene().sigMouseClicked.connect(self._on_clicked)
        controls = QHBoxLayout()
        controls.setContentsMargins(0, 0, 0, 0)
        controls.addWidget(self.on_input)
        controls.addWidget(self.opacity, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.canvas, 1)
        layout.addLayout(controls)

    def show_tile(self, tile: np.ndarray, levels: tuple[float, float], text: str, spatial: bool = False) -> None:
        """Show `tile`; `spatial`: it maps the input's area, so it may be laid over the input."""
        shape = np.shape(tile)
        self._tile = np.ascontiguousarray(tile, dtype=np.float32)
        self.image.setImage(self._tile, levels=levels, autoLevels=False)
        self._spatial = spatial
        self._overlay()  # the input under it stretched to this tile's size before the view is fitted
        if shape != self._framed:  # a tile of the same size (a video's next frame): the user's zoom stays
            self._framed = shape
            self.marker.setVisible(False)
            self.view.autoRange(padding=0.02, items=[self.image])  # the tile: not the last tile's marker
        key, _, rest = text.partition(" · ")  # wraps between "min …" and "max …", never inside; a long key at its dots
        self.label.setText(keep_pairs(breakable(key) + (f" · {rest}" if rest else ""), " · "))
        self.label.setToolTip(text)  # whole, where a long key is wider than the map (the panel's header has it whole)

    def set_backdrop(self, picture: np.ndarray | None) -> None:
        """The input picture ((H, W, 3) uint8) a spatial map can be laid over; None: there is none."""
        self._picture = None if picture is None else np.ascontiguousarray(picture)
        self._overlay()

    def overlaid(self) -> bool:
        """The map is drawn over the input picture now."""
        return self.backdrop.isVisible()

    def _overlay(self, *_args) -> None:
        can = self._spatial and self._picture is not None and self._tile is not None
        self.on_input.setEnabled(can)
        self.opacity.setEnabled(can and self.on_input.isChecked())
        if can and self.on_input.isChecked():
            h, w = self._tile.shape[:2]
            self.backdrop.setImage(self._picture, levels=(0, 255), autoLevels=False)
            self.backdrop.setRect(QRectF(0, 0, w, h))  # the picture stretched over the map's pixels
            self.backdrop.setVisible(True)
            self.image.setOpacity(self.opacity.value() / 100)
        else:
            self.backdrop.setVisible(False)
            self.image.setOpacity(1.0)

    # -- the cursor ------------------------------------------------------------------
    def pixel_at(self, scene_pos) -> tuple[int, int] | None:
        """The tile's (y, x) under a scene position, or None off the map."""
        if scene_pos is None or self._tile is None or not self.view.sceneBoundingRect().contains(scene_pos):
            return None
        point = self.view.mapSceneToView(scene_pos)
        y, x = math.floor(point.y()), math.floor(point.x())
        h, w = self._tile.shape[:2]
        return (y, x) if 0 <= y < h and 0 <= x < w else None

    def mark(self, pixel: tuple[int, int] | None) -> None:
        """Outline pixel (y, x) of the tile; None hides the outline."""
        if pixel is None or self._tile is None:
            self.marker.setVisible(False)
            return
        y, x = pixel
        self.marker.setRect(x, y, 1, 1)
        self.marker.setVisible(True)

    def _on_moved(self, scene_pos) -> None:
        self.sigMoved.emit(self.pixel_at(scene_pos))

    def _on_clicked(self, event) -> None:
        if event.double():
            self.view.autoRange(padding=0.02, items=[self.image])

    def refit(self) -> None:
        """Fit the next tile to the view whatever its size (another key is shown)."""
        self._framed = None

    def clear(self) -> None:
        self.image.clear()
        self._framed = None
        self._tile = None
        self._spatial = False
        self.marker.setVisible(False)
        self._overlay()
        self.label.setText(" ")
