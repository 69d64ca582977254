"""A saved figure: the central view on screen at a chosen scale (PNG) or as vectors (SVG), with a
caption written under it in the picture — model, weights and seed, input, layer, edits — so a figure
says what it shows wherever it ends up. Rendered in memory, written through the one writer."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPoint, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QImage, QPainter
from PySide6.QtSvg import QSvgGenerator

CAPTION_PAD = 6


def caption_of(state) -> str:
    """"resnet18 (random, seed 3) · input cat.png · layer layer4.1.conv2 · edits: relu:grad_input=guided()"."""
    info = state.model
    if info is None:
        return "no model loaded"
    weights = info.weights + (f", seed {info.seed}" if info.seed is not None and "seed" not in info.weights else "")
    on = [str(e) for e in state.edits if e.enabled]
    parts = [f"{info.source} ({weights})", f"input {Path(state.input).name if state.input else 'none'}"]
    if state.layer:
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
        _paint(svg, widget, caption, font, total, 1.0)
        buffer.close()
        return bytes(data.data())
    image = QImage(int(total.width() * scale), int(total.height() * scale), QImage.Format_ARGB32)
    image.setDevicePixelRatio(1.0)
    image.fill(QColor("white"))
    _paint(image, widget, caption, font, total, scale)
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.WriteOnly)
    image.save(buffer, "PNG")
    buffer.close()
    return bytes(data.data())


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
