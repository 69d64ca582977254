"""A figure drawn from the data a view holds, never grabbed from the screen: cells in a grid, each its
title, its map over the input in its colour map, its colour bar with the range, its deletion and insertion
curves when it has them and its caption lines, then a caption for the whole figure. Everything is laid out
for the figure (a cell's map is `side` px on its longer side), not for the window, so nothing is clipped
and no control shows. Painted by one QPainter routine in the figure's own pixel units: the PNG is a QImage
at a scale, the SVG QSvgGenerator's, and both hold the same picture for any renderer: the maps embedded
at the pixel size they are drawn (no resampling by the renderer), strokes of plain widths in pixel
coordinates (no non-scaling pens under a scaling transform), text written line by line."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPointF, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter, QPen, QPolygonF
from PySide6.QtSvg import QSvgGenerator

from inspector.core.pictures.fit import covers

from .svg import in_pixels, plain_strokes

MARGIN, GAP = 14, 24  # around the figure; between cells
SIDE = 240  # a map's longer side, px at scale 1
BAR_GAP, BAR_W, TICK = 8, 12, 4  # the colour bar beside its map
PLOT_H = 110  # the curves' frame
TEXT_PX, TITLE_PX = 12, 13
INK, SOFT, FAILED = "#1a1a1a", "#555555", "#b00000"


@dataclass(frozen=True)
class FigureCurve:
    label: str  # "deletion (AUC 0.412)"
    scores: np.ndarray  # at equally spaced fractions 0..1
    colour: str


@dataclass(frozen=True)
class FigureCell:
    """One cell: `values` (H, W) drawn over `picture` (H, W, 3, or a whole number of times that a side; 0..255) in
    `colours` (a pyqtgraph ColorMap, its alpha the map's own opacity) between `levels` at `opacity`, 0 marked on the
    bar of a `signed` one;
    `failed`: no map, `lines` say why."""

    title: str
    lines: tuple[str, ...] = ()
    values: np.ndarray | None = None
    picture: np.ndarray | None = None
    levels: tuple[float, float] = (0.0, 1.0)
    sign: str = "positive"
    opacity: float = 0.6
    curves: tuple[FigureCurve, ...] = ()
    curve_axes: tuple[str, str] = ("fraction of pixels, hottest first", "score")  # bottom, left
    failed: bool = False
    colours: object = None  # pg.ColorMap (the views' heat_colours), needed with `values`


def fmt(value: float, spec: str = ".3g") -> str:
    """A number for people, NaN and infinities spelled out (as views.number_format)."""
    value = float(value)
    if math.isnan(value):
        return "NaN"
    return ("Inf" if value > 0 else "-Inf") if math.isinf(value) else format(value, spec)


def _font(px: int, bold: bool = False) -> QFont:
    font = QFont()
    font.setStyleHint(QFont.SansSerif)
    font.setPixelSize(px)
    font.setBold(bold)
    return font


def wrapped(text: str, metrics: QFontMetricsF, width: float) -> list[str]:
    """`text` in lines no wider than `width`: broken at its " · " first, then at spaces, a longer word cut
    where it must be."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for part in paragraph.split(" · "):
            trial = f"{line} · {part}" if line else part
            if metrics.horizontalAdvance(trial) <= width:
                line = trial
                continue
            if line:
                lines.append(line + " ·")
            line = ""
            for word in part.split(" "):
                trial = f"{line} {word}" if line else word
                if line and metrics.horizontalAdvance(trial) > width:
                    lines.append(line)
                    line = word
                else:
                    line = trial
        lines.append(line)
    out = []
    for line in lines:
        while metrics.horizontalAdvance(line) > width and len(line) > 1:
            cut = next((k for k in range(len(line) - 1, 0, -1) if metrics.horizontalAdvance(line[:k]) <= width), 1)
            out.append(line[:cut])
            line = line[cut:]
        out.append(line)
    return out


def _resampled(array: np.ndarray, height: int, width: int) -> np.ndarray:
    """`array` (H, W, ...) at `height` x `width` pixels, nearest: what the renderer will not have to do."""
    rows = np.arange(height) * array.shape[0] // height
    cols = np.arange(width) * array.shape[1] // width
    return array[rows][:, cols]


def _qimage(rgb: np.ndarray) -> QImage:
    rgb = np.ascontiguousarray(rgb, dtype=np.uint8)
    h, w = rgb.shape[:2]
    return QImage(rgb.data, w, h, 3 * w, QImage.Format_RGB888).copy()


def _over_white(rgba: np.ndarray) -> np.ndarray:
    alpha = rgba[..., 3:4].astype(np.float64) / 255.0
    return rgba[..., :3] * alpha + 255.0 * (1.0 - alpha)


def overlay(cell: FigureCell, height: int, width: int) -> np.ndarray:
    """The map over its picture (H, W, 3 uint8) at `height` x `width` pixels, as the view blends them: the
    colour map's own opacity times the cell's; white where there is no picture."""
    values = np.nan_to_num(np.asarray(cell.values, dtype=np.float64))
    lo, hi = cell.levels
    norm = np.clip((_resampled(values, height, width) - lo) / ((hi - lo) or 1.0), 0.0, 1.0)
    rgba = cell.colours.map(norm.reshape(-1), mode="byte").reshape(height, width, 4).astype(np.float64)
    base = np.full((height, width, 3), 255.0)
    picture = cell.picture
    if picture is not None and covers(picture.shape, values.shape):  # the map's pixels or a whole multiple
        rgb = np.asarray(picture, dtype=np.float64)
        rgb = np.repeat(rgb[..., None], 3, axis=2) if rgb.ndim == 2 else rgb[..., :3]
        base = np.clip(_resampled(rgb, height, width), 0, 255)
    alpha = rgba[..., 3:4] / 255.0 * cell.opacity
    return np.round(base * (1 - alpha) + rgba[..., :3] * alpha).astype(np.uint8)


def _pen(colour: str, width: float = 1.0) -> QPen:
    pen = QPen(QColor(colour))
    pen.setWidthF(width)
    pen.setCosmetic(False)  # a plain stroke in every renderer (figure_svg)
    pen.setCapStyle(Qt.RoundCap)
    pen.setJoinStyle(Qt.RoundJoin)
    return pen


class Figure:
    """The figure of `cells` in `columns` columns (3 at most by default) with `caption` under them."""

    def __init__(self, cells, caption: str = "", columns: int = 3, side: int = SIDE) -> None:
        self.cells = tuple(cells)
        self.caption = caption
        self.columns = max(1, min(columns, len(self.cells) or 1))
        self.side = side
        self.font, self.title_font = _font(TEXT_PX), _font(TITLE_PX, bold=True)
        self.text, self.titles = QFontMetricsF(self.font), QFontMetricsF(self.title_font)
        self.line_h, self.title_h = math.ceil(self.text.lineSpacing()), math.ceil(self.titles.lineSpacing())
        ticks = [fmt(v, ".3g") for c in self.cells if c.values is not None for v in self._ticks(c)]
        self.tick_w = math.ceil(max([self.text.horizontalAdvance(t) for t in ticks] + [0]))
        self.cell_w = side + BAR_GAP + BAR_W + TICK + 3 + self.tick_w
        self._lay_out()

    # -- layout ---------------------------------------------------------------------------------
    def map_size(self, cell: FigureCell) -> tuple[int, int]:
        """(width, height) of the cell's map: its picture's shape with the longer side `side`."""
        if cell.values is None:
            return self.side, self.side // 2
        h, w = np.shape(cell.values)[:2]
        k = self.side / max(h, w, 1)
        return max(1, round(w * k)), max(1, round(h * k))

    def _lay_out(self) -> None:
        wrap = self.cell_w - 4  # room for a renderer whose text runs a little wider than Qt's
        self.title_lines = [wrapped(c.title, self.titles, wrap) for c in self.cells]
        self.caption_lines = [[piece for line in c.lines for piece in wrapped(line, self.text, wrap)]
                              if not c.failed else [] for c in self.cells]
        self.rows = []  # (top, title height, map height, plot height, lines height) per row
        top = MARGIN
        for start in range(0, len(self.cells), self.columns):
            ks = range(start, min(start + self.columns, len(self.cells)))
            title = max(len(self.title_lines[k]) for k in ks) * self.title_h + 4
            picture = max(self.map_size(self.cells[k])[1] for k in ks) + 6
            plot = max(self._plot_height(self.cells[k]) for k in ks)
            lines = max(len(self.caption_lines[k]) for k in ks) * self.line_h
            self.rows.append((top, title, picture, plot, lines))
            top += title + picture + plot + lines + GAP
        self.width = 2 * MARGIN + self.columns * self.cell_w + (self.columns - 1) * GAP
        self.figure_caption = wrapped(self.caption, self.text, self.width - 2 * MARGIN - 4) if self.caption else []
        self.height = (top - GAP if self.rows else top) + MARGIN + (
            len(self.figure_caption) * self.line_h + 8 if self.caption else 0)

    def _plot_height(self, cell: FigureCell) -> int:
        if not cell.curves:
            return 0
        axis = len(wrapped(cell.curve_axes[0], self.text, self.cell_w - 4))
        return self.line_h + PLOT_H + (1 + axis + len(cell.curves)) * self.line_h + 10

    def size(self) -> QSize:
        return QSize(int(self.width), int(self.height))

    def cell_rect(self, index: int) -> QRect:
        """Where cell `index` lies in the figure (px at scale 1)."""
        row, col = divmod(index, self.columns)
        top, *heights = self.rows[row]
        return QRect(MARGIN + col * (self.cell_w + GAP), top, self.cell_w, sum(heights))

    def map_rect(self, index: int) -> QRect:
        """Where cell `index`'s map lies in the figure (px at scale 1)."""
        row, col = divmod(index, self.columns)
        top, title = self.rows[row][:2]
        w, h = self.map_size(self.cells[index])
        return QRect(MARGIN + col * (self.cell_w + GAP), top + title, w, h)

    @staticmethod
    def _ticks(cell: FigureCell) -> list[float]:
        lo, hi = cell.levels
        middle = 0.0 if cell.sign == "signed" and lo < 0 < hi else (lo + hi) / 2
        return [hi, middle, lo]

    # -- painting -------------------------------------------------------------------------------
    def paint(self, painter: QPainter, scale: float = 1.0) -> None:
        """The figure in `painter` (already scaled by `scale`; maps are made at `scale` pixels per unit)."""
        painter.setRenderHint(QPainter.Antialiasing, True)
        painter.setRenderHint(QPainter.TextAntialiasing, True)
        painter.fillRect(QRectF(0, 0, self.width, self.height), QColor("white"))
        for k, cell in enumerate(self.cells):
            self._paint_cell(painter, k, cell, scale)
        if self.figure_caption:
            painter.setFont(self.font)
            painter.setPen(QColor(INK))
            y = self.rows[-1][0] + sum(self.rows[-1][1:]) + 8 if self.rows else MARGIN
            for line in self.figure_caption:
                painter.drawText(QPointF(MARGIN, y + self.text.ascent()), line)
                y += self.line_h

    def _paint_cell(self, painter: QPainter, k: int, cell: FigureCell, scale: float) -> None:
        row = self.rows[k // self.columns]
        top, title_h, picture_h, plot_h, _lines = row
        box = self.map_rect(k)
        x = box.left()
        painter.setFont(self.title_font)
        painter.setPen(QColor(FAILED if cell.failed else INK))
        for i, line in enumerate(self.title_lines[k]):
            painter.drawText(QPointF(x, top + i * self.title_h + self.titles.ascent()), line)
        if cell.failed or cell.values is None:
            painter.fillRect(box, QColor("#f2f2f2"))
            painter.setFont(self.font)
            painter.setPen(QColor(FAILED))
            for i, line in enumerate(wrapped(" ".join(cell.lines), self.text, box.width() - 16)[:8]):
                painter.drawText(QPointF(x + 8, box.top() + 8 + i * self.line_h + self.text.ascent()), line)
        else:
            self._paint_map(painter, cell, box, scale)
        y = top + title_h + picture_h
        if cell.curves:
            self._paint_curves(painter, cell, QRect(x, y, self.cell_w, plot_h))
        painter.setFont(self.font)
        painter.setPen(QColor(INK))
        for i, line in enumerate(self.caption_lines[k]):
            painter.drawText(QPointF(x, y + plot_h + i * self.line_h + self.text.ascent()), line)

    def _paint_map(self, painter: QPainter, cell: FigureCell, box: QRect, scale: float) -> None:
        pw, ph = max(1, round(box.width() * scale)), max(1, round(box.height() * scale))
        painter.drawImage(QRectF(box), _qimage(overlay(cell, ph, pw)))
        painter.setPen(_pen("#888888"))
        painter.setBrush(Qt.NoBrush)
        painter.drawRect(QRectF(box))
        bar = QRectF(box.right() + 1 + BAR_GAP, box.top(), BAR_W, box.height())
        t = np.linspace(1.0, 0.0, max(1, round(bar.height() * scale)))
        colours = _over_white(cell.colours.map(t, mode="byte").astype(np.float64))
        strip = np.repeat(colours[:, None, :], max(1, round(BAR_W * scale)), axis=1)
        painter.drawImage(bar, _qimage(np.round(strip)))
        painter.drawRect(bar)
        lo, hi = cell.levels
        painter.setFont(self.font)
        for value in self._ticks(cell):
            y = bar.top() + (hi - value) / ((hi - lo) or 1.0) * bar.height()
            painter.setPen(_pen(SOFT))
            painter.drawLine(QPointF(bar.right(), y), QPointF(bar.right() + TICK, y))
            baseline = min(max(y + self.text.ascent() / 2 - 1, bar.top() + self.text.ascent()), bar.bottom())
            painter.setPen(QColor(SOFT))
            painter.drawText(QPointF(bar.right() + TICK + 3, baseline), fmt(value, ".3g"))

    def _paint_curves(self, painter: QPainter, cell: FigureCell, area: QRect) -> None:
        scores = np.concatenate([np.asarray(c.scores, dtype=np.float64).reshape(-1) for c in cell.curves])
        scores = scores[np.isfinite(scores)]
        lo, hi = (float(scores.min()), float(scores.max())) if scores.size else (0.0, 1.0)
        if hi - lo < 1e-12:
            lo, hi = lo - 0.5, hi + 0.5
        pad = 0.05 * (hi - lo)
        lo, hi = lo - pad, hi + pad
        labels = [fmt(hi - pad, ".3g"), fmt(lo + pad, ".3g")]
        left = area.left() + math.ceil(max(self.text.horizontalAdvance(t) for t in labels)) + TICK + 4
        frame = QRectF(left, area.top() + self.line_h + 4, area.right() - 6 - left, PLOT_H)
        painter.setFont(self.font)
        painter.setPen(QColor(SOFT))
        painter.drawText(QPointF(area.left(), area.top() + self.text.ascent()), cell.curve_axes[1])
        painter.setPen(_pen("#e3e3e3"))
        for f in (0.25, 0.5, 0.75):
            painter.drawLine(QPointF(frame.left() + f * frame.width(), frame.top()),
                             QPointF(frame.left() + f * frame.width(), frame.bottom()))
            painter.drawLine(QPointF(frame.left(), frame.top() + f * frame.height()),
                             QPointF(frame.right(), frame.top() + f * frame.height()))
        painter.setPen(_pen("#888888"))
        painter.setBrush(Qt.NoBrush)
        painter.drawRect(frame)

        def y_of(v: float) -> float:
            return frame.top() + (hi - v) / (hi - lo) * frame.height()

        painter.setPen(QColor(SOFT))
        for text, v in zip(labels, (hi - pad, lo + pad)):
            painter.drawText(QPointF(frame.left() - TICK - 2 - self.text.horizontalAdvance(text),
                                     y_of(v) + self.text.ascent() / 2 - 1), text)
        for f in (0.0, 0.5, 1.0):
            text = fmt(f, "g")
            painter.drawText(QPointF(frame.left() + f * frame.width() - self.text.horizontalAdvance(text) / 2,
                                     frame.bottom() + 2 + self.text.ascent()), text)
        y = frame.bottom() + 2 + self.line_h
        for line in wrapped(cell.curve_axes[0], self.text, self.cell_w - 4):
            x = min(max(frame.center().x() - self.text.horizontalAdvance(line) / 2, area.left()),
                    area.left() + self.cell_w - 4 - self.text.horizontalAdvance(line))
            painter.drawText(QPointF(x, y + self.text.ascent()), line)
            y += self.line_h
        y += 2
        for curve in cell.curves:
            values = np.asarray(curve.scores, dtype=np.float64).reshape(-1)
            xs = np.linspace(0.0, 1.0, len(values))
            points = [QPointF(frame.left() + f * frame.width(), y_of(v)) for f, v in zip(xs, values) if np.isfinite(v)]
            painter.setPen(_pen(curve.colour, 2.0))
            painter.drawPolyline(QPolygonF(points))
            middle = y + self.line_h / 2  # the legend's sample of the line
            painter.drawLine(QPointF(frame.left(), middle), QPointF(frame.left() + 18, middle))
            painter.setPen(QColor(INK))
            painter.drawText(QPointF(frame.left() + 24, y + self.text.ascent()), curve.label)
            y += self.line_h

    # -- files ----------------------------------------------------------------------------------
    def png(self, scale: float = 1.0) -> bytes:
        """The figure as a PNG of `scale` x its size."""
        image = QImage(max(1, round(self.width * scale)), max(1, round(self.height * scale)), QImage.Format_RGB32)
        image.fill(QColor("white"))
        painter = QPainter(image)
        painter.scale(scale, scale)
        self.paint(painter, scale)
        painter.end()
        return png_bytes(image)

    def svg(self) -> bytes:
        """The figure as an SVG of its size in px."""
        data = QByteArray()
        buffer = QBuffer(data)
        buffer.open(QIODevice.WriteOnly)
        generator = QSvgGenerator()
        generator.setOutputDevice(buffer)
        generator.setResolution(96)
        generator.setSize(self.size())
        generator.setViewBox(QRect(0, 0, int(self.width), int(self.height)))
        generator.setTitle(self.caption or "; ".join(c.title for c in self.cells))
        generator.setDescription("Network Inspector figure")
        painter = QPainter(generator)
        self.paint(painter, 1.0)
        painter.end()
        buffer.close()
        return in_pixels(plain_strokes(bytes(data.data())))

    def file_bytes(self, suffix: str, scale: float = 1.0) -> bytes:
        return self.svg() if suffix == ".svg" else self.png(scale)


def png_bytes(image: QImage) -> bytes:
    """`image` as the bytes of a PNG file."""
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.WriteOnly)
    image.save(buffer, "PNG")
    buffer.close()
    return bytes(data.data())
