"""One channel enlarged: its map at the mosaic's levels and colours, labelled with key, channel, range."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from .number_format import fmt, keep_pairs


def describe(key: str, noun: str, channel: int, tile: np.ndarray) -> str:
    """"key · channel 3 · min … max …" over the tile's finite values."""
    finite = tile[np.isfinite(tile)]
    text = f"{key} · {noun} {channel}"
    if finite.size == 0:
        return text + " · no finite values"
    return text + f" · min {fmt(finite.min())} · max {fmt(finite.max())}"


class ChannelZoom(QWidget):
    def __init__(self, size: int = 170, parent=None) -> None:
        super().__init__(parent)
        self.label = QLabel(" ")
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.setMinimumSize(size, size)
        self.setMaximumWidth(int(size * 1.4))
        self.view = self.canvas.addViewBox(lockAspect=True, invertY=True)
        self.view.setMenuEnabled(False)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.view.addItem(self.image)
        self._framed = None  # the tile shape the view was last fitted to
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.canvas, 1)

    def show_tile(self, tile: np.ndarray, levels: tuple[float, float], text: str) -> None:
        shape = np.shape(tile)
        self.image.setImage(np.ascontiguousarray(tile, dtype=np.float32), levels=levels, autoLevels=False)
        if shape != self._framed:  # a tile of the same size (a video's next frame): the user's zoom stays
            self._framed = shape
            self.view.autoRange(padding=0.02)
        self.label.setText(keep_pairs(text, " · "))  # wraps between "min …" and "max …", never inside

    def refit(self) -> None:
        """Fit the next tile to the view whatever its size (another key is shown)."""
        self._framed = None

    def clear(self) -> None:
        self.image.clear()
        self._framed = None
        self.label.setText(" ")
