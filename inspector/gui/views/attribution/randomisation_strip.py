"""The randomisation strip (issue 55 item 5), as Adebayo et al.'s figure shows MPRT ("Sanity checks for saliency
maps", NeurIPS 2018, figure 2): the original map, then the map at each step of cascading randomisation (each
captioned with the layer that step re-initialised, the logits first), each |map| on its own colour scale, and
under them the similarity to the original per step: Spearman of |map| (the verdict's), of the signed map, and
SSIM, the threshold dashed (their key under the strip, always in sight). A dialog; the strip scrolls sideways when it is
longer than the dialog."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QDialog, QFrame, QLabel, QScrollArea, QVBoxLayout

from inspector.core.records.signs import picture_of

from ...common.heat_colours import heat_colormap

CELL = 128  # a map's side on screen
PLOT_HEIGHT = 190
#: The similarities drawn under the strip, the verdict's last (on top): (field, words, colour).
CURVES = (("ssim", "SSIM of |map|", "#54a24b"), ("spearman_signed", "Spearman of the signed map", "#f58518"),
          ("spearman_abs", "Spearman of |map| (the verdict's)", "#4c78a8"))
THRESHOLD_COLOUR = "#e45756"


def magnitude(attribution_map: np.ndarray) -> np.ndarray:
    """The |map| picture compared at each step (scores.similarity's rule): an image's, else a row of values."""
    m = np.asarray(attribution_map)
    if m.ndim in (2, 3):
        return picture_of(m, "absolute").astype(np.float32)
    return np.abs(m.reshape(1, -1)).astype(np.float32)


def caption(step: int, name: str, spearman: float) -> str:
    return f"<b>{'original' if step == 0 else name}</b><br><small>step {step} · ρ|map| {spearman:.2f}</small>"


class RandomisationStrip(QDialog):
    """The strip of one MPRT (a core `Randomisation`) of cell `name`; `images` holds the maps drawn, in order."""

    def __init__(self, name: str, randomisation, parent=None) -> None:
        super().__init__(parent)
        m = randomisation
        self.setWindowTitle(f"Randomisation strip: {name}")
        self.title = QLabel(
            f"<b>{name}</b> under {m.mode} randomisation (MPRT, Adebayo et al. 2018): the layers re-initialised "
            f"from the logits down, seed {m.seed}{' (drawn)' if m.seed_drawn else ''}, threshold {m.threshold:g}."
            f"<br><b>Verdict</b>: {m.verdict}.")
        self.title.setWordWrap(True)
        self.key = QLabel("  ".join(f"<span style='color:{colour}'>━━</span> {words}" for _f, words, colour
                                    in reversed(CURVES)) + f"  <span style='color:{THRESHOLD_COLOUR}'>╌╌</span> "
                                                           f"threshold {m.threshold:g}")
        self.canvas = pg.GraphicsLayoutWidget()
        self.images: list[pg.ImageItem] = []
        self.captions: list[pg.LabelItem] = []
        colours = heat_colormap()
        for step, (name_, found) in enumerate(zip(m.steps, m.maps)):
            label = pg.LabelItem(caption(step, name_, float(m.curve[step])), size="8pt")
            self.canvas.ci.addItem(label, row=0, col=step)
            view = pg.ViewBox(lockAspect=True, invertY=True, enableMouse=False)
            view.setMenuEnabled(False)
            view.setFixedWidth(CELL)
            view.setFixedHeight(CELL)
            values = magnitude(found)
            top = float(np.nanmax(values)) if np.isfinite(values).any() else 1.0
            image = pg.ImageItem(values, axisOrder="row-major", levels=(0.0, top if top > 0 else 1.0))
            image.setColorMap(colours)
            view.addItem(image)
            view.autoRange(padding=0.0)
            self.canvas.ci.addItem(view, row=1, col=step)
            self.images.append(image)
            self.captions.append(label)
        self.plot = self._curves(m)
        self.canvas.ci.addItem(self.plot, row=2, col=0, colspan=len(m.maps))
        self.canvas.setMinimumSize(QSize(len(m.maps) * (CELL + 12) + 40, CELL + PLOT_HEIGHT + 60))
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.NoFrame)
        scroll.setWidget(self.canvas)
        scroll.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(scroll, 1)
        layout.addWidget(self.key)
        self.resize(min(self.canvas.minimumWidth() + 30, 1400), CELL + PLOT_HEIGHT + 160)

    @staticmethod
    def _curves(m) -> pg.PlotItem:
        """Each similarity per step, the threshold (of Spearman |map|) dashed."""
        plot = pg.PlotItem()
        plot.setMenuEnabled(False)
        plot.setMouseEnabled(False, False)
        plot.hideButtons()
        plot.showGrid(x=True, y=True, alpha=0.2)
        plot.setLabel("bottom", "step (0: the original; then one more layer re-initialised, the logits first)")
        plot.setLabel("left", "similarity to the original")
        plot.setFixedHeight(PLOT_HEIGHT)
        steps = np.arange(len(m.similarities))
        for field, words, colour in CURVES:
            values = np.array([np.nan if getattr(s, field) is None else getattr(s, field) for s in m.similarities],
                              dtype=float)
            if np.isfinite(values).any():
                plot.plot(steps, values, pen=pg.mkPen(colour, width=2), symbol="o", symbolSize=5, symbolBrush=colour)
        plot.addLine(y=m.threshold, pen=pg.mkPen(THRESHOLD_COLOUR, style=Qt.DashLine))  # the key is under the strip
        plot.setXRange(-0.5, len(steps) - 0.5, padding=0)
        plot.getAxis("bottom").setTicks([[(i, str(i)) for i in steps]])
        return plot
