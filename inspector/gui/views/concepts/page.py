"""What the Concepts view draws besides bars: a map over the input (the picture as the model saw it, the map on top
as attribution maps are drawn), and a concept's page (its top images over the folder, the region where it is
strongest outlined, as `network-inspector concepts` wrote them: a file here, or pixels a remote engine sent)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRect, Qt, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QPixmap
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPushButton, QScrollArea, QVBoxLayout

from inspector.core.pictures.clipping import clip_levels

from ...common.heat_colours import heat_colormap, signed_colormap
from ..number_format import fmt

SIGNED_CLIP = 99.0  # a signed map's colours top out at this percentile of |value|
PAGE_WIDE = 1400  # a page narrower than half this is shown at twice its size
PAGE_TALL = 900  # nor taller than this (or the screen)
NUMBER_BACK = QColor(0, 0, 0, 170)  # under a tile's number


class OverlayMap(pg.GraphicsLayoutWidget):
    """The picture with a map over it: non-negative maps from 0 to their largest value in the heat colours, signed
    ones (a pixel-level relevance map) symmetric about 0 up to the 99th percentile of |value| (blue below, red
    above), as the Attribution tab clips its maps by default."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.title = self.addLabel("", row=0, col=0, size="9pt")
        self.view = self.addViewBox(row=1, col=0, lockAspect=True, invertY=True)
        self.view.setMenuEnabled(False)
        self.view.setMouseEnabled(x=False, y=False)
        self.picture = pg.ImageItem(axisOrder="row-major")
        self.heat = pg.ImageItem(axisOrder="row-major")
        self.heat.setOpacity(0.6)
        self.view.addItem(self.picture)
        self.view.addItem(self.heat)
        self.values: np.ndarray | None = None  # the (H, W) map drawn
        self.levels: tuple[float, float] | None = None  # the values at the colour map's ends
        self.setMinimumSize(120, 130)

    def show_map(self, values: np.ndarray, picture: np.ndarray | None, title: str, signed: bool = False) -> None:
        self.values = np.asarray(values, np.float32)
        if picture is not None and picture.shape[:2] == self.values.shape:
            self.picture.setImage(picture, autoLevels=False, levels=(0, 255))
        else:
            self.picture.clear()
        levels = clip_levels(self.values, SIGNED_CLIP, signed=True) if signed else (0.0, _largest(self.values))
        self.levels = levels
        self.heat.setColorMap(signed_colormap() if signed else heat_colormap())
        self.heat.setImage(self.values, autoLevels=False, levels=levels)
        self.title.setText(title)
        self.view.autoRange(padding=0.01)

    def clear_map(self, title: str = "") -> None:
        self.values = None
        self.picture.clear()
        self.heat.clear()
        self.title.setText(title)


def _largest(values: np.ndarray) -> float:
    top = float(np.nanmax(values)) if values.size and np.isfinite(values).any() else 0.0
    return top if top > 0 else 1.0


class ConceptPage(QDialog):
    """A concept's page: its top images (pages/concept_NNN.png) and, from the record, each one's file and score.

    Signals
    -------
    sigUse(str): make this top image (relative to the record's image folder) the input.
    """

    sigUse = Signal(str)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Concept page")
        self.picture = QLabel()
        self.picture.setAlignment(Qt.AlignLeft | Qt.AlignTop)
        scroll = QScrollArea()
        scroll.setWidget(self.picture)
        scroll.setWidgetResizable(True)
        scroll.setMinimumHeight(120)
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.caption.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.use = QPushButton("Use the top image as input")
        self.use.clicked.connect(lambda: self.sigUse.emit(self.use.property("image") or ""))
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(scroll, 1)
        layout.addWidget(self.caption)
        layout.addWidget(self.use)
        layout.addWidget(buttons)
        self.concept: int | None = None
        self.folder = ""  # the dictionary's folder shown
        self.tops = 0  # how many top images the page shows
        self.resize(760, 300)

    def show_concept(self, folder: str, record: dict, concept: int, page: Path | np.ndarray | None = None,
                     why: str = "") -> None:
        """Concept `concept` of the dictionary in `folder` (its record: the top images and their scores). `page`:
        its picture, a file or its RGB pixels (H, W, 3) uint8; None: `why` there is none, or, without a why, the
        picture comes later (`show_picture`)."""
        self.concept, self.folder = concept, folder
        layer = record.get("layer", "")
        self.setWindowTitle(f"Concept {concept} of {layer}: its top images")
        entry = next((c for c in record.get("concepts", []) if c.get("id") == concept), None)
        tops = entry.get("top", []) if entry else []
        self.tops = len(tops)
        if isinstance(page, Path):
            self._show_pixmap(QPixmap(str(page)) if page.is_file() else None,
                              f"No page at {page} (the dictionary was learned without pictures).")
        else:
            self.show_picture(page, why or f"Reading concept {concept}'s page …")
        lines = [f"#{rank + 1} {t['image']} (score {fmt(t['score'], '.4g')})" for rank, t in enumerate(tops)]
        stats = ""
        if entry:
            stats = (f"Over the images: mean {fmt(entry.get('mean', float('nan')), '.4g')}, active at "
                     f"{fmt(entry.get('active_fraction', float('nan')), '.1%')} of the positions. ")
        root = record.get("data", {}).get("root", "")
        self.caption.setText(f"{stats}The region where the concept is strongest is outlined. Images in {root}: "
                             + ("; ".join(lines) if lines else "none recorded") + f". ({folder})")
        self.use.setProperty("image", tops[0]["image"] if tops else "")
        self.use.setEnabled(bool(tops))

    def show_picture(self, rgb: np.ndarray | None, why: str = "") -> None:
        """The page's pixels, (H, W, 3) uint8 (None: `why` in their place)."""
        self._show_pixmap(None if rgb is None else pixmap_of(rgb), why)

    def _show_pixmap(self, pixmap: QPixmap | None, why: str) -> None:
        if pixmap is None or pixmap.isNull():
            self.picture.setPixmap(QPixmap())
            self.picture.setText(why)
            return
        if pixmap.width() and pixmap.width() * 2 <= PAGE_WIDE:  # small tiles (a 64-pixel model's) at 2x
            pixmap = pixmap.scaledToHeight(2 * pixmap.height(), Qt.SmoothTransformation)
        self.picture.setPixmap(numbered(pixmap, self.tops))
        # the page whole where the screen has room (the caption and buttons take about 170 pixels)
        screen = self.screen().availableGeometry() if self.screen() else None
        tall = min(PAGE_TALL, screen.height() - 80) if screen else PAGE_TALL
        self.resize(max(self.width(), min(pixmap.width() + 40, PAGE_WIDE)),
                    max(self.height(), min(pixmap.height() + 170, tall)))


def pixmap_of(rgb: np.ndarray) -> QPixmap:
    """(H, W, 3) uint8 pixels as a pixmap (copied: the array may go)."""
    rgb = np.ascontiguousarray(rgb, dtype=np.uint8)
    height, width = rgb.shape[:2]
    return QPixmap.fromImage(QImage(rgb.data, width, height, 3 * width, QImage.Format_RGB888).copy())


def numbered(pixmap: QPixmap, count: int) -> QPixmap:
    """The page with each of its `count` tiles numbered #1, #2, ... in its corner, as the caption lists them (the
    page is a row of square tiles as high as the page, evenly spaced: `core.concepts.pages`)."""
    if count < 1 or pixmap.isNull():
        return pixmap
    side = pixmap.height()
    pitch = (pixmap.width() + (pixmap.width() - count * side) / max(count - 1, 1)) / count if count > 1 else side
    out = QPixmap(pixmap)
    painter = QPainter(out)
    try:
        font = painter.font()
        font.setPixelSize(max(9, side // 8))
        font.setBold(True)
        painter.setFont(font)
        metrics = painter.fontMetrics()
        for rank in range(count):
            text = f"#{rank + 1}"
            box = QRect(round(rank * pitch), 0, metrics.horizontalAdvance(text) + 6, metrics.height() + 2)
            painter.fillRect(box, NUMBER_BACK)
            painter.setPen(Qt.white)
            painter.drawText(box, Qt.AlignCenter, text)
    finally:
        painter.end()
    return out
