"""One panel for one capture: all channels as a single mosaic image, a histogram, statistics.

Conv maps are tiled into one pyqtgraph ImageItem (C-contiguous float32, explicit levels) with
a ColorBarItem; gradients use a diverging map centred on zero. A parameter gradient shows every
filter (`inspector.core.pictures.mosaic`); more than a page of channels is paged. Vectors (Linear
outputs, biases) are drawn as bars, token x feature outputs and Linear weights as one image.
Hover shows the channel and value; a click enlarges a channel (outlined in the mosaic) and
emits sigChannelClicked and sigChannelZoomed; `zoom_channel` enlarges one without a signal, so
two panels can follow each other. The pixel under the mouse (over the mosaic or the enlarged
channel) is sent as sigCursor, and `show_cursor` reads out and marks that pixel here: linked
cursors between the activation and gradient sides. `set_backdrop` gives the enlarged channel the
input picture to be laid over.
"""

from __future__ import annotations

import time

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (QGraphicsRectItem, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QStackedWidget,
                               QVBoxLayout, QWidget)

from inspector.core.pictures.mosaic import PAGE, Grid, Mosaic, capture_maps, is_attention, is_parameter, levels, mosaic_of
from inspector.core.records.stats import TensorStats
from inspector.core.records.tokens import TokenGrid, prefix_tokens

from .channel_pager import ChannelPager
from .channel_zoom import ChannelZoom, describe
from .colour_bar import colour_bar, constant_value, say_constant
from .mosaic_image import MosaicImage
from .number_format import breakable, format_stats, keep_pairs
from .panel_cursor import PanelCursorMixin
from .panel_plots import ValueHistogram, VectorBars

_MAPS = {True: "CET-D1", False: "viridis"}
_DEFAULT_LEVELS = {True: (-1.0, 1.0), False: (0.0, 1.0)}


# Height of the enlarged channel (with its overlay row) and histogram row: 40% of the panel's, within these. Its least
# holds the channel's two-line label, a MIN_MAP_HEIGHT map and the overlay row (a long banner above the tabs once
# squeezed the row to 160 px and laid "on input" over the enlarged map).
_DETAILS_MIN, _DETAILS_MAX = 130, 324


STATS_COMING = "Statistics: being worked out…"
STATS_STOPPED = "Statistics: stopped (Esc); press F5 to work them out."


class TensorPanel(PanelCursorMixin, QWidget):
    """Signals
    -------
    sigChannelClicked(int): the user clicked a channel of the mosaic.
    sigChannelZoomed(int): the user enlarged this channel (a click); not sent by `zoom_channel`.
    sigCursor(object): (channel, y, x, maps shape), the map pixel under the mouse, or None when it left.
    """

    sigChannelClicked = Signal(int)
    sigChannelZoomed = Signal(int)
    sigCursor = Signal(object)

    def __init__(self, title: str, diverging: bool, parent=None) -> None:
        super().__init__(parent)
        self.diverging = diverging
        self.base_title = title
        self.stats_missing = STATS_COMING  # what the statistics line says while a capture has none
        self._hover_at = None  # where the mouse last was over the maps (scene position)
        self.mosaic: Mosaic | None = None
        self.maps: np.ndarray | None = None
        self.kernels: Grid | None = None
        self.key = ""
        self.channel: int | None = None  # the enlarged channel
        self.first = 0  # first channel of the page shown
        self.tokens: TokenGrid | None = None  # the model's patch grid (transformers)
        self.layouts: dict[str, bool] | None = None  # which layers' 4-D outputs are channels-last (set_layouts)
        self.prefix: np.ndarray | None = None  # (prefix tokens, C) of a token capture on the grid
        self.query = 0  # for attention captures: the token whose attention is drawn (0: the class token)
        self._levels = _DEFAULT_LEVELS[diverging]
        # With a live video: the histogram (its axes are the dearest part to paint) is redrawn at
        # most this often, the mosaic and statistics every frame; 0 redraws it every time. The
        # colour levels are then also kept while a frame's values fit them (no flicker, no repaint
        # of the colour bar's axis) and fill at least half of them.
        self.histogram_every_s = 0.0
        self._histogram_at = 0.0
        self._framed = None  # (key, first channel, image shape) the view was last fitted to
        self._live_levels = None  # the key whose levels are being kept for a live video
        self._colour_diverging = diverging  # the colour map in use (attention is drawn sequential)
        self.title = QLabel(f"<b>{title}</b>")
        self.title.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)  # a long key never widens the panel...
        self.title.setWordWrap(True)  # ...and the line wraps whole ("tokens on the 14x14 patch g" was cut at 1280)
        self.hover = QLabel(" ")
        self.stats = QLabel(" ")
        self.stats.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.stats.setWordWrap(True)
        self.pager = ChannelPager()
        self.pager.sigPageChanged.connect(self.set_page)

        self.canvas = pg.GraphicsLayoutWidget()
        self.view = self.canvas.addViewBox(row=0, col=0, lockAspect=True, invertY=True)
        self.view.setMenuEnabled(False)
        self.image = MosaicImage(axisOrder="row-major")  # its NaN gaps found cheaper at render
        self.view.addItem(self.image)
        self.highlight = QGraphicsRectItem()
        self.highlight.setPen(pg.mkPen("#ff3030", width=2))  # cosmetic: 2 screen pixels at any zoom
        self.highlight.setZValue(10)
        self.highlight.setVisible(False)
        self.view.addItem(self.highlight, ignoreBounds=True)
        self.zoom = ChannelZoom()
        self.zoom_image = self.zoom.image
        self.zoom.sigMoved.connect(self._on_zoom_moved)
        self.zoom.canvas.installEventFilter(self)
        self._spatial = False  # the maps cover the input's area (conv maps, a patch grid)
        self.colorbar = colour_bar(self._levels, pg.colormap.get(_MAPS[diverging]), 14, interactive=True)
        self.colorbar.setImageItem([self.image, self.zoom_image])
        self.canvas.addItem(self.colorbar, row=0, col=1)
        self.canvas.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.canvas.installEventFilter(self)  # the mouse leaving the maps ends the readout
        self.canvas.scene().sigMouseClicked.connect(self._on_mouse_clicked)

        self.bars = VectorBars()
        self.bar_item = self.bars.bar_item
        self.message = QLabel(" ")
        self.message.setAlignment(Qt.AlignCenter)
        self.message.setWordWrap(True)
        self.message.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)  # a long key never widens the panel
        font = QFont(self.message.font())
        font.setPointSizeF(font.pointSizeF() * 1.3)
        self.message.setFont(font)
        self.stack = QStackedWidget()
        for page in (self.canvas, self.bars, self.message):
            self.stack.addWidget(page)
        self.action = QPushButton()  # under the message, when something can be done about it (show_missing)
        self.action.setVisible(False)
        self._do = None
        self.action.clicked.connect(lambda: self._do is not None and self._do())

        self.hist = ValueHistogram()
        self.hist.setMinimumWidth(120)  # room for its value labels beside the enlarged channel
        self.hist_curve = self.hist.curve

        self.click_mode = QLabel()  # what a click on a channel does besides enlarging it (Ablate), when it does
        self.click_mode.setStyleSheet("color: #d04010;")
        self.click_mode.setWordWrap(True)
        self.click_mode.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.click_mode.setVisible(False)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.title)
        layout.addWidget(self.click_mode)
        layout.addWidget(self.pager)
        layout.addWidget(self.stack, 3)
        layout.addWidget(self.action, 0, Qt.AlignHCenter)
        self.details = QWidget()  # the enlarged channel and the histogram, hidden when there is no capture
        row = QHBoxLayout(self.details)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.zoom)
        row.addWidget(self.hist, 1)
        self.details.setMaximumHeight(_DETAILS_MAX)
        layout.addWidget(self.details, 2)
        layout.addWidget(self.stats)
        layout.addWidget(self.hover)
        self.clear()

    def set_click_mode(self, text: str | None) -> None:
        """Say over the maps that a click changes the model's computation (`text`), with a cross cursor on
        them; None: a click only enlarges a channel again."""
        self.click_mode.setText(text or "")
        self.click_mode.setVisible(bool(text))
        if text:
            self.canvas.setCursor(Qt.CrossCursor)
        else:
            self.canvas.unsetCursor()

    def resizeEvent(self, event) -> None:
        """The mosaic keeps most of the height: the enlarged channel and histogram take at most 40%."""
        super().resizeEvent(event)
        self.details.setMaximumHeight(min(_DETAILS_MAX, max(_DETAILS_MIN, int(self.height() * 0.4))))

    # -- updates -------------------------------------------------------------------
    def clear(self, message: str = "") -> None:
        """Empty the panel, saying `message` (why there is nothing) in its middle."""
        self.key, self.mosaic, self.maps, self.kernels, self.channel, self.first = "", None, None, None, None, 0
        self._pending = None  # (new key, array, stats): what show_details has still to draw
        self._framed = None
        self.prefix = None
        self.image.clear()
        self.zoom.clear()
        self.highlight.setVisible(False)
        self.pager.setVisible(False)
        self.colorbar.setLevels(_DEFAULT_LEVELS[self.diverging])
        say_constant(self.colorbar, None)
        self.bars.clear_values()
        self.hist.clear_values()
        self.title.setText(f"<b>{self.base_title}</b>")
        # a long module path may break after its dots: it wrapped whole rather than being cut at the panel's edge
        # (an HF ViT's "vit.encoder.layer.0.attention.attention" in the attention hint)
        self.message.setText(" ".join(breakable(word) for word in message.split(" ")) if message else " ")
        self.message.setToolTip(message)
        self.stack.setCurrentWidget(self.message)
        self.action.setVisible(False)
        self._do = None
        self.stats.setText(message or " ")
        self.stats.setVisible(False)  # the message is shown in the middle
        self.details.setVisible(False)
        self.hover.setText(" ")

    def show_missing(self, message: str, action: tuple[str, str, object] | None = None) -> None:
        """Nothing to show here, and why ("conv1 has no bias parameter"); `action`: (label, tooltip, function) of a
        button under the message that does something about it."""
        self.clear(message)
        if action is not None:
            label, tip, self._do = action
            self.action.setText(label)
            self.action.setToolTip(tip)
            self.action.setVisible(True)

    def show_capture(self, key: str, array: np.ndarray, stats: TensorStats | None, details: bool = True) -> None:
        """Draw a capture: the maps (or bars), then the histogram, statistics and the row under the maps;
        `details=False` leaves that second part to `show_details` (a later event-loop turn: a result is drawn
        in turns, each painted before the next)."""
        new = key != self.key
        self._pending = None
        if new:
            self.hover.setText(" ")
            self.zoom.refit()
            self.channel, self.first = None, 0
        self.key = key
        array = np.asarray(array)
        on_grid = self.tokens is not None and array.ndim == 3 and self.tokens.fits(array.shape[1])
        self.prefix = prefix_tokens(array, self.tokens) if on_grid else None
        title = key + (f" · tokens on the {self.tokens.describe()}" if on_grid else "") + self._query_text(key, array)
        self.title.setText(f"<b>{breakable(key)}</b>{title[len(key):]}")
        self.title.setToolTip(title)  # the whole line, where the panel is too narrow for it
        if array.ndim <= 1 or (array.ndim == 2 and not is_parameter(key)):
            self._show_vector(array)
        else:
            self._show_maps(key, array)
        self._pending = (new, array, stats)
        if details:
            self.show_details()

    def show_details(self) -> None:
        """The part of the last `show_capture(..., details=False)` still to draw: the histogram, statistics and
        the row under the maps (nothing when it was drawn, or the panel cleared or drawn again since)."""
        if self._pending is None:
            return
        (new, array, stats), self._pending = self._pending, None
        now = time.perf_counter()
        if new or now - self._histogram_at >= self.histogram_every_s:  # a live video: twice a second
            self.hist.show_values(array)
            self.show_stats(stats)
            self._histogram_at = now
        self.stats.setVisible(True)
        self.details.setVisible(True)
        if not new and self._hover_at is not None and self.maps is not None:
            self.hover.setText(" ")
            self._on_mouse_moved(self._hover_at)  # the readout under a still mouse: the new values

    def show_stats(self, stats: TensorStats | None) -> None:
        """The statistics line (None: they are still being worked out in the worker)."""
        if self._pending is not None:  # drawn with the histogram, these statistics
            self._pending = self._pending[:2] + (stats,)
        self.stats.setText(keep_pairs(format_stats(stats)) if stats is not None else self.stats_missing)

    def set_stats_stopped(self, stopped: bool) -> None:
        """Esc stopped the result's statistics before they were all worked out (or a new result came)."""
        self.stats_missing = STATS_STOPPED if stopped else STATS_COMING
        if stopped and self.stats.text() == STATS_COMING:
            self.stats.setText(STATS_STOPPED)

    def _query_text(self, key: str, array: np.ndarray) -> str:
        if not self._is_attention(key) or array.ndim != 4:
            return ""
        grid = self.tokens
        if grid is None or array.shape[-1] != grid.prefix + grid.height * grid.width:
            return " · per head: the whole attention matrix (query × key)"
        q = self.query
        where = "the class token" if q < grid.prefix else \
            f"patch ({(q - grid.prefix) // grid.width}, {(q - grid.prefix) % grid.width})"
        return f" · per head: what {where} attends to (click the input for a patch)"

    @staticmethod
    def _is_attention(key: str) -> bool:
        return is_attention(key)

    def set_query(self, query: int) -> None:
        """Draw attention captures for token `query` (0 is the class token where the model has one)."""
        self.query = query

    def set_tokens(self, grid: TokenGrid | None) -> None:
        """The loaded model's patch grid: (B, N, C) captures that fit it are drawn as C maps of it."""
        self.tokens = grid

    def set_layouts(self, layouts: dict[str, bool] | None) -> None:
        """The loaded model's word on which layers' 4-D outputs are channels-last (`LayerTree.layouts`)."""
        self.layouts = layouts

    def _show_maps(self, key: str, array: np.ndarray) -> None:
        self.stack.setCurrentWidget(self.canvas)
        self.action.setVisible(False)  # the message's button goes with it
        self.maps, self.kernels = capture_maps(key, array, self.tokens, self.query, self.layouts)
        self._spatial = self._covers_the_input(key, array)
        diverging = self.diverging and not self._is_attention(key)  # probabilities: a sequential map
        if diverging != self._colour_diverging:
            self._colour_diverging = diverging
            self.colorbar.setColorMap(pg.colormap.get(_MAPS[diverging]))
        found = levels(self.maps, diverging)
        if self.histogram_every_s > 0:  # a live video: levels with room, kept while frames fit them
            lo, hi = self._levels
            if not (self._live_levels == key and lo <= found[0] and found[1] <= hi
                    and found[1] - found[0] >= 0.5 * (hi - lo)):
                pad = 0.1 * (found[1] - found[0])
                found = (found[0] if found[0] == 0 else found[0] - pad, found[1] + pad)
                self._live_levels = key
            else:
                found = (lo, hi)
        else:
            self._live_levels = None
        self._levels = found
        say_constant(self.colorbar, constant_value(self.maps))
        if self.first >= len(self.maps):
            self.first = 0
        self._draw_page()

    def _covers_the_input(self, key: str, array: np.ndarray) -> bool:
        """The maps are pictures of the input's area: conv maps, or tokens (attention) on the patch grid;
        not weights, Linear outputs or an attention matrix."""
        if self.kernels is not None or is_parameter(key):
            return False
        grid = self.tokens
        on_grid = grid is not None and tuple(self.maps.shape[-2:]) == (grid.height, grid.width)
        if self._is_attention(key) or array.ndim == 3:
            return on_grid
        return array.ndim == 4

    def set_backdrop(self, picture: np.ndarray | None) -> None:
        """The input as the model sees it ((H, W, 3) uint8), for laying the enlarged channel over it."""
        self.zoom.set_backdrop(picture)

    def _draw_page(self) -> None:
        self.zoom.setVisible(True)
        self.mosaic = mosaic_of(self.maps, self.first, PAGE, kernels=self.kernels)
        self.image.setImage(self.mosaic.image, levels=self._levels, autoLevels=False)
        if tuple(self.colorbar.levels()) != tuple(self._levels):
            self.colorbar.setLevels(self._levels)
        self.pager.set_range(self.first, self.mosaic.channels, self.mosaic.total, self._noun() + "s")
        shape = (self.key, self.first, self.mosaic.image.shape)
        if shape != self._framed:  # the same mosaic again (a new frame of a video): the user's zoom stays
            self._framed = shape
            self.view.autoRange(padding=0.01)
        if self.channel is None or self.channel >= len(self.maps):
            self.channel = self.first
        self._zoom(self.channel)

    def _show_vector(self, array: np.ndarray) -> None:
        self.stack.setCurrentWidget(self.bars)
        self.action.setVisible(False)  # the message's button goes with it
        self.mosaic, self.maps, self.kernels, self.channel = None, None, None, None
        self.zoom.clear()
        self.zoom.setVisible(False)
        self.highlight.setVisible(False)
        self.pager.setVisible(False)
        self.bars.show_values(array)

    def _noun(self) -> str:
        if self._is_attention(self.key):
            return "head"
        return "filter" if self.kernels is not None else "channel"

    # -- paging and the enlarged channel ----------------------------------------------
    def set_page(self, first: int) -> None:
        """Show the page of channels starting at `first` (rounded down to a page)."""
        if self.maps is None:
            return
        self.first = max(0, min(first, len(self.maps) - 1)) // PAGE * PAGE
        self._draw_page()

    def zoom_channel(self, channel: int) -> None:
        """Enlarge `channel` (turning to its page), without emitting sigChannelZoomed."""
        if self.maps is None or not 0 <= channel < len(self.maps):
            return
        self.channel = channel
        if not self.mosaic.contains(channel):
            self.set_page(channel)
        else:
            self._zoom(channel)

    def _zoom(self, channel: int) -> None:
        if self.maps is None or not 0 <= channel < len(self.maps):
            return
        self.channel = channel
        tile = self.maps[channel]
        self.zoom.show_tile(tile, self._levels, describe(self.key, self._noun(), channel, tile), self._spatial)
        m = self.mosaic
        if m is not None and m.contains(channel):
            row, col = m.origin(channel)
            self.highlight.setRect(col, row, m.tile_w, m.tile_h)  # the tile's pixels, in image units
            self.highlight.setVisible(True)
        else:
            self.highlight.setVisible(False)
