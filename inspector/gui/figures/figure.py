"""A saved figure, with a caption written under it in the picture — model, weights and seed, input, layer,
edits — so a figure says what it shows wherever it ends up. The Attribution tab's is drawn from its data
(`attribution_figure`: the map over the input with its colour bar, the deletion and insertion curves and
the map's caption; or every cell of Compare all), never grabbed, so no control and no clipping end up in
it; the other tabs' is the view on screen (`figure_bytes`). PNG at a chosen scale or SVG, whose strokes
read the same in any renderer (figure_svg). Rendered in memory, written through the one writer."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPoint, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QImage, QPainter
from PySide6.QtSvg import QSvgGenerator

from .draw import Figure, FigureCell, FigureCurve, png_bytes
from .svg import in_pixels, plain_strokes

CAPTION_PAD = 6
SINGLE_SIDE = 320  # the Attribution tab's one map, px at 1x


def caption_of(state, layer: bool = True) -> str:
    """"resnet18 (random, seed 3) · input cat.png · layer layer4.1.conv2 · edits: relu:grad_input=guided()";
    `layer`: with the Layer tab's layer (not for an attribution map, which says its own)."""
    info = state.model
    if info is None:
        return "no model loaded"
    weights = info.weights + (f", seed {info.seed}" if info.seed is not None and "seed" not in info.weights else "")
    on = [str(e) for e in state.edits if e.enabled]
    parts = [f"{info.source} ({weights})", f"input {Path(state.input).name if state.input else 'none'}"]
    if state.layer and layer:
        parts.append(f"layer {state.layer}")
    parts.append("edits: " + ("; ".join(on) if on else "none"))
    return " · ".join(parts)


def figure_bytes(widget, caption: str, suffix: str, scale: float = 1.0) -> bytes:
    """The figure of `widget` with `caption` under it: PNG at `scale` (or SVG) file contents."""
    font = QFont(widget.font())
    font.setPointSizeF(max(font.pointSizeF(), 9.0))
    width, height = widget.width(), widget.height()
    lines = QFontMetrics(font).boundingRect(QRect(0, 0, width - 2 * CAPTION_PAD, 10_000),
                                            Qt.TextWordWrap, caption).height()
    total = QSize(width, height + lines + 2 * CAPTION_PAD)
    if suffix == ".svg":
        data = QByteArray()
        buffer = QBuffer(data)
        buffer.open(QIODevice.WriteOnly)
        svg = QSvgGenerator()
        svg.setOutputDevice(buffer)
        svg.setSize(total)
        svg.setViewBox(QRect(QPoint(0, 0), total))
        svg.setTitle(caption)
        svg.setResolution(96)
        _paint(svg, widget, caption, font, total, 1.0)
        buffer.close()
        return in_pixels(plain_strokes(bytes(data.data())))
    image = QImage(int(total.width() * scale), int(total.height() * scale), QImage.Format_ARGB32)
    image.setDevicePixelRatio(1.0)
    image.fill(QColor("white"))
    _paint(image, widget, caption, font, total, scale)
    return png_bytes(image)


def _paint(device, widget, caption: str, font: QFont, total: QSize, scale: float) -> None:
    painter = QPainter(device)
    painter.scale(scale, scale)
    painter.fillRect(QRect(QPoint(0, 0), total), QColor("white"))
    widget.render(painter, QPoint(0, 0))
    painter.setFont(font)
    painter.setPen(QColor("black"))
    painter.drawText(QRect(CAPTION_PAD, widget.height() + CAPTION_PAD, total.width() - 2 * CAPTION_PAD,
                           total.height() - widget.height()), Qt.TextWordWrap, caption)
    painter.end()


def _plain(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").strip()


def attribution_figure(view, caption: str = "") -> Figure | None:
    """The Attribution tab's figure, drawn from what it shows: Compare all's cells while the comparison is
    on screen, else the map over the input with its colour bar, its deletion and insertion curves and its
    caption (the first two notes as the title); None when there is nothing to draw yet."""
    from ..common.heat_colours import colormap_for

    if view.pages.currentWidget() is view.comparison:
        cells = view.comparison.figure_cells()
        return Figure(cells, caption) if cells else None
    if view.values is None:
        return None
    notes = [n for n in _plain(view.caption.text()).split(" · ") if n]
    lines = notes[2:]
    if not view.baseline_box.isHidden():
        lines.append(f"{_plain(view.baseline_title.text())}: {_plain(view.baseline_text.text())}")
    plot = view.curves.getPlotItem()
    curves = tuple(FigureCurve(item.name() or metric, np.asarray(item.getData()[1]), _colour(metric))
                   for metric, item in view.curves.lines.items())
    axes = (plot.getAxis("bottom").labelText, plot.getAxis("left").labelText)
    image = view.picture.image
    cell = FigureCell(" · ".join(notes[:2]), tuple(lines), np.asarray(view.values), image,
                      tuple(view.colorbar.levels()), view.shown_sign, float(view.heat.opacity()), curves, axes,
                      colours=colormap_for(view.shown_sign))
    return Figure([cell], caption, side=SINGLE_SIDE)


def _colour(metric: str) -> str:
    from ..common.heat_colours import FAITHFULNESS_COLOURS

    return FAITHFULNESS_COLOURS.get(metric, "#333333")
