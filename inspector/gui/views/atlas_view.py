"""The Atlas view (a dock): a channel atlas's top images for one channel of one layer.

Open an atlas folder from disk, or build one from the loaded model and the ticked layers over
a folder of images (in the worker, with progress; Cancel stops it, building again resumes).
A layer and channel are picked here or by clicking a channel in a mosaic; each top image is
shown as the model saw it with the argmax region outlined, its score and file, and one click
("Use as input") makes it the input. It shows what the state sends; it holds no tensor.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QPen, QPixmap
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from inspector.gui.common import file_dialogs

from .folder_job import FolderJobControls, FolderJobDialog
from .number_format import fmt

PICTURE_PX = 132  # side of each top image
COLUMNS = 2


def picture_pixmap(rgb: np.ndarray, box, size: int = PICTURE_PX) -> QPixmap:
    """The picture scaled to fit `size`, the argmax region (left, top, right, bottom) outlined."""
    rgb = np.ascontiguousarray(rgb)
    h, w, _ = rgb.shape
    image = QImage(rgb.data, w, h, 3 * w, QImage.Format_RGB888).copy()
    pixmap = QPixmap.fromImage(image).scaled(size, size, Qt.KeepAspectRatio, Qt.SmoothTransformation)
    if box is not None:
        sx, sy = pixmap.width() / w, pixmap.height() / h
        left, top, right, bottom = box
        painter = QPainter(pixmap)
        painter.setPen(QPen(QColor("#ffd400"), 2))
        painter.drawRect(round(left * sx), round(top * sy), max(2, round((right - left) * sx) - 1),
                         max(2, round((bottom - top) * sy) - 1))
        painter.end()
    return pixmap


class BuildDialog(FolderJobDialog):
    """Images folder, output folder, top K and batch size for building an atlas."""

    def __init__(self, layers: list[str], parent=None) -> None:
        super().__init__("atlas", "Build a channel atlas", parent)
        self.top = QSpinBox(minimum=1, maximum=100, value=9)
        self.batch = QSpinBox(minimum=1, maximum=512, value=16)
        self.form.addRow(QLabel(f"Layers (the ticked ones): {', '.join(layers)}", wordWrap=True))
        self._folder_rows()
        self.form.addRow("Top images per channel", self.top)
        self.form.addRow("Batch size", self.batch)
        self._finish(560)

    def choices(self) -> tuple[str, str, int, int]:
        """(images folder, output folder, top K, batch size)."""
        return self.data.text(), self.out.text(), self.top.value(), self.batch.value()


class AtlasView(QWidget, FolderJobControls):
    """Signals
    -------
    sigOpen(str): open the atlas in this folder.
    sigBuild(): ask for what to build.
    sigCancel(): stop the build.
    sigChannel(str, int): show this layer's channel.
    sigUse(str): make this top image (path relative to the atlas's image folder) the input.
    """

    sigOpen = Signal(str)
    sigBuild = Signal()
    sigCancel = Signal()
    sigChannel = Signal(str, int)
    sigUse = Signal(str)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.opened = None
        layout = self._job_layout("Open atlas…", "Open a folder holding an atlas.json (made here or by "
                                  "`network-inspector atlas`)", "Build an atlas of the ticked layers over a folder "
                                  "of images", unit="images")
        self.info = QLabel("No atlas yet. Open one, or build one from the ticked layers over a folder of "
                           "images; then click a channel in a mosaic to see the images that excite it most.")
        self.info.setWordWrap(True)
        self.owner = QLabel()  # why the open atlas is not the loaded model's (hidden when it is)
        self.owner.setWordWrap(True)
        self.owner.setStyleSheet("background: #5a3a00; color: #ffe9b0; padding: 4px;")
        self.owner.setVisible(False)
        self.layer = QComboBox()
        self.layer.setMinimumContentsLength(12)
        self.channel = QSpinBox()
        self.channel.setKeyboardTracking(False)
        self.stats = QLabel(" ")
        self.stats.setWordWrap(True)
        self.grid_host = QWidget()
        self.grid = QGridLayout(self.grid_host)
        self.grid.setAlignment(Qt.AlignTop | Qt.AlignLeft)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        scroll.setWidget(self.grid_host)
        pick = QHBoxLayout()
        for w, stretch in ((QLabel("Layer"), 0), (self.layer, 1), (QLabel("Channel"), 0), (self.channel, 0)):
            pick.addWidget(w, stretch)
        layout.addWidget(self.info)
        layout.addWidget(self.owner)
        layout.addLayout(pick)
        layout.addWidget(self.stats)
        layout.addWidget(scroll, 1)
        self.cells: list[tuple[QLabel, QLabel, QPushButton]] = []
        self.open_button.clicked.connect(self.ask_open)
        self.build_button.clicked.connect(self.sigBuild.emit)
        self.layer.activated.connect(lambda _i: self._emit_channel())
        self.channel.valueChanged.connect(lambda _v: self._emit_channel())
        self._set_picking_enabled(False)

    # -- what the user does ------------------------------------------------------------------
    def ask_open(self) -> None:
        path = file_dialogs.choose_folder(self, "atlas-out", "Open an atlas (a folder with atlas.json)", engine=True)
        if path:
            self.sigOpen.emit(path)

    def _emit_channel(self) -> None:
        layer = self.layer.currentText()
        if self.opened is not None and layer:
            self.channel.setMaximum(self.opened.channels(layer) - 1)
            self.sigChannel.emit(layer, self.channel.value())

    # -- what the state says --------------------------------------------------------------------
    def show_atlas(self, opened) -> None:
        self.opened = opened
        atlas = opened.atlas
        where = opened.data or "image folder unknown (thumbnails only)"
        skipped = f", {len(atlas['skipped'])} skipped" if atlas["skipped"] else ""
        self.info.setText(f"<b>{atlas['model']}</b> · {atlas['images']} images{skipped} · {where}")
        self.info.setToolTip(opened.out_dir)
        self.layer.blockSignals(True)
        self.layer.clear()
        self.layer.addItems(opened.layers())
        self.layer.blockSignals(False)
        self._set_picking_enabled(True)
        self._emit_channel()

    def set_owner(self, why: str) -> None:
        """Say plainly when the open atlas is not the loaded model's (`why` non-empty)."""
        self.owner.setVisible(bool(why))
        if why and self.opened is not None:
            model = self.opened.atlas.get("model")
            self.owner.setText(f"<b>Not the loaded model's atlas</b>: {why}. The pictures below are {model}'s "
                               f"channels, not the loaded model's, and clicks on its mosaics do not open them.")

    def show_channel(self, layer: str, channel: int) -> bool:
        """Show `layer`'s channel `channel` (a mosaic click); False when the atlas lacks the layer."""
        if self.opened is None or layer not in self.opened.atlas["layers"]:
            return False
        if channel >= self.opened.channels(layer):
            return False
        self.layer.setCurrentText(layer)
        self.channel.blockSignals(True)
        self.channel.setMaximum(self.opened.channels(layer) - 1)
        self.channel.setValue(channel)
        self.channel.blockSignals(False)
        self._emit_channel()
        return True

    def show_pictures(self, pictures) -> None:
        layer, channel = self.layer.currentText(), self.channel.value()
        data = self.opened.atlas["layers"][layer]
        self.stats.setText(f"Channel {channel} over the images: mean {fmt(data['mean'][channel], '.4g')}, "
                           f"std {fmt(data['std'][channel], '.4g')}, positive "
                           f"{fmt(data['frac_positive'][channel], '.1%')}. Score: the channel's maximum.")
        while len(self.cells) < len(pictures):
            self._add_cell()
        for i, (picture, caption, use) in enumerate(self.cells):
            if i >= len(pictures):
                for w in (picture, caption, use):
                    w.setVisible(False)
                continue
            p = pictures[i]
            if p.rgb is not None:
                picture.setPixmap(picture_pixmap(p.rgb, p.box))
            else:
                picture.setPixmap(QPixmap())
                picture.setText(p.shown)
            where = "argmax region outlined" if p.box is not None else p.shown
            name = caption.fontMetrics().elidedText(p.image, Qt.ElideMiddle, PICTURE_PX)
            caption.setText(f"#{p.rank + 1} score {fmt(p.score, '.4g')}<br>{name}")
            caption.setToolTip(f"{p.image}\nargmax at map position (y {p.y}, x {p.x}); {where}")
            use.setProperty("image", p.image)
            for w in (picture, caption, use):
                w.setVisible(True)

    def _add_cell(self) -> None:
        i = len(self.cells)
        picture = QLabel()
        picture.setFixedSize(PICTURE_PX, PICTURE_PX)
        picture.setAlignment(Qt.AlignCenter)
        picture.setStyleSheet("background: #202020; color: #ddd;")
        caption = QLabel()
        caption.setFixedWidth(PICTURE_PX)
        use = QPushButton("Use as input")
        use.setFixedWidth(PICTURE_PX)
        use.setToolTip("Make this image the input")
        use.clicked.connect(lambda: self.sigUse.emit(use.property("image")))
        cell = QVBoxLayout()
        cell.addWidget(picture)
        cell.addWidget(caption)
        cell.addWidget(use)
        self.grid.addLayout(cell, i // COLUMNS, i % COLUMNS)
        self.cells.append((picture, caption, use))

    def _set_picking_enabled(self, on: bool) -> None:
        for w in (self.layer, self.channel):
            w.setEnabled(on)
