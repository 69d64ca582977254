"""What the Concepts view draws besides bars: a map over the input (the picture as the model saw it, the map on top
as attribution maps are drawn), and a concept's page (its top images over the folder, the region where it is
strongest outlined, as `network-inspector concepts` wrote them)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPushButton, QScrollArea, QVBoxLayout

from .heat_colours import heat_colormap, signed_colormap
from .number_format import fmt


class OverlayMap(pg.GraphicsLayoutWidget):
    """The picture with a map over it: non-negative maps from 0 to their largest value in the heat colours, signed
    ones symmetric about 0 (blue below, red above)."""

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
        self.setMinimumSize(140, 150)

    def show_map(self, values: np.ndarray, picture: np.ndarray | None, title: str, signed: bool = False) -> None:
        self.values = np.asarray(values, np.float32)
        if picture is not None and picture.shape[:2] == self.values.shape:
            self.picture.setImage(picture, autoLevels=False, levels=(0, 255))
        else:
            self.picture.clear()
        top = float(np.nanmax(np.abs(self.values))) if self.values.size else 0.0
        top = top if top > 0 else 1.0
        self.heat.setColorMap(signed_colormap() if signed else heat_colormap())
        self.heat.setImage(self.values, autoLevels=False, levels=(-top, top) if signed else (0.0, top))
        self.title.setText(title)
        self.view.autoRange(padding=0.01)

    def clear_map(self, title: str = "") -> None:
        self.values = None
        self.picture.clear()
        self.heat.clear()
        self.title.setText(title)


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
        self.resize(760, 300)

    def show_concept(self, folder: str, record: dict, concept: int, page: Path) -> None:
        self.concept = concept
        layer = record.get("layer", "")
        self.setWindowTitle(f"Concept {concept} of {layer}: its top images")
        if page.is_file():
            self.picture.setPixmap(QPixmap(str(page)))
        else:
            self.picture.setPixmap(QPixmap())
            self.picture.setText(f"No page at {page} (the dictionary was learned without pictures).")
        entry = next((c for c in record.get("concepts", []) if c.get("id") == concept), None)
        tops = entry.get("top", []) if entry else []
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
