"""Baseline | edited | difference mosaics, one row per capture, for the Compare tab.

The three columns of a row are the same mosaic geometry (one `Mosaic` for both arrays, the
difference taken pixel by pixel) in linked views; baseline and edited share one colour bar,
the difference has its own, symmetric around zero. Hover names the channel and the three values;
a click on a channel (any column) emits sigChannelClicked with the row's key and the channel.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal

from inspector.core.pictures.mosaic import Mosaic, levels, make_mosaic

from ...common.paint_turns import after_paint
from ..colour_bar import colour_bar
from ..mosaic_image import MosaicImage
from ..number_format import fmt

ROWS = ("activation", "gradient", "input gradient")
COLS = ("baseline", "edited", "difference")
_VIEW_COL = {"baseline": 1, "edited": 2, "difference": 4}  # colour bars in columns 3 and 5


@dataclass
class _Parts:
    images: dict
    views: dict
    bars: dict
    headers: dict


@dataclass
class Shown:
    key: str
    mosaic: Mosaic  # geometry and the baseline image
    images: tuple[np.ndarray, np.ndarray, np.ndarray]  # baseline, edited, difference


@dataclass
class Prepared:
    """A row worked out (`CompareGrid.prepare_row`), not drawn yet."""

    shown: Shown
    shared: tuple[float, float]  # the levels of baseline and edited
    difference: tuple[float, float]  # the difference's, symmetric around zero


class CompareGrid(pg.GraphicsLayoutWidget):
    """Signals
    -------
    sigChannelClicked(str, int): the user clicked this channel of the row showing this key.
    """

    sigChannelClicked = Signal(str, int)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.shown: dict[str, Shown] = {}
        self.tokens = None  # the model's patch grid (inspector.core.records.tokens.TokenGrid), for token captures
        self.layouts = None  # which layers' 4-D outputs are channels-last (LayerTree.layouts)
        self.names = {col: col for col in COLS}  # what the columns are called (a second model: first, second)
        self._parts: _Parts | None = None  # the views, images and colour bars: made when first shown or asked for
        self._making: Iterator[None] | None = None  # what is left to make of them (None: nothing, or not begun)
        self._making_one = False  # a part is being made (what it calls back finds the parts as they are)
        self.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.scene().sigMouseClicked.connect(self._on_mouse_clicked)
        self.hover_text = " "
        self.on_hover = None  # called with the hover text

    # The nine views and six colour bars take 0.3 s to make (a third of the window's start): the Compare tab is
    # hidden at start, so they are made when the grid is first shown, a part an event-loop turn (each painted
    # before the next: made in one turn they stalled the window 0.3 s), or all at once when first drawn into.
    @property
    def images(self) -> dict[tuple[str, str], pg.ImageItem]:
        return self._made().images

    @property
    def views(self) -> dict[tuple[str, str], pg.ViewBox]:
        return self._made().views

    @property
    def bars(self) -> dict[tuple[str, str], pg.ColorBarItem]:
        """(row, "shared" | "difference")"""
        return self._made().bars

    @property
    def headers(self) -> dict[str, pg.LabelItem]:
        return self._made().headers

    @property
    def made(self) -> bool:
        """Whether the views are all made (they are some turns after the grid is first shown, or once drawn into)."""
        return self._parts is not None and self._making is None

    def showEvent(self, event) -> None:
        if self._parts is None:
            self._begin()
            self._make_in_turns()
        super().showEvent(event)

    def _begin(self) -> None:
        if self._parts is None:
            # kept before they are made: making them calls back here (showEvent, a view's range changed),
            # which must find these, not make a second set over the first
            self._parts = _Parts({}, {}, {}, {})
            self._making = self._make(self._parts)

    def _made(self) -> _Parts:
        """The parts, those not made yet made now (a call back from making one finds them as they are)."""
        self._begin()
        while self._making is not None and not self._making_one:
            self._make_one()
        return self._parts

    def _make_one(self) -> None:
        self._making_one = True
        try:
            next(self._making)
        except StopIteration:
            self._making = None
        finally:
            self._making_one = False

    def _make_in_turns(self) -> None:
        """The next part now, the one after it in a later turn, once this one is painted."""
        if self._making is not None:
            self._make_one()
            if self._making is not None:
                after_paint(self, self._make_in_turns)

    def _make(self, parts: _Parts) -> Iterator[None]:
        """Make the parts in order, yielding after each: the headers, each view, each colour bar made, then laid out."""
        parts.headers.update({col: self.addLabel(self.names[col], row=0, col=_VIEW_COL[col]) for col in COLS})
        for r, row in enumerate(ROWS):
            self.addLabel(row, row=r + 1, col=0, angle=-90)
            for col in COLS:
                yield
                view = self.addViewBox(row=r + 1, col=_VIEW_COL[col], lockAspect=True, invertY=True, enableMenu=False)
                image = MosaicImage(axisOrder="row-major")  # its NaN gaps found cheaper at render
                view.addItem(image)
                parts.images[row, col], parts.views[row, col] = image, view
            for col in COLS:  # once the row's three are made
                parts.views[row, col].sigRangeChanged.connect(lambda v, *_, row=row: self._follow(row, v))
            shared_map = "viridis" if row == "activation" else "CET-D1"
            for name, items, cmap, c in (("shared", ("baseline", "edited"), shared_map, 3),
                                         ("difference", ("difference",), "CET-D1", 5)):
                yield
                bar = colour_bar((0, 1), pg.colormap.get(cmap), 12)
                bar.setImageItem([parts.images[row, i] for i in items])
                yield  # made in one turn, laid out in the next (each took half of a bar's turn)
                self.addItem(bar, row=r + 1, col=c)
                bar.setVisible(False)  # shown with its row's images
                parts.bars[row, name] = bar
        for c in _VIEW_COL.values():  # one preferred width (over the headers' text) and stretch: equal views
            self.ci.layout.setColumnPreferredWidth(c, 120)
            self.ci.layout.setColumnStretchFactor(c, 1)
        self.ci.layout.activate()  # the views their size now: the rest made at once to draw a row into them

    def set_names(self, before: str, after: str) -> None:
        """Call the first two columns `before` and `after` (headers and hover)."""
        for col, name in zip(COLS, (before, after, "difference")):
            self.names[col] = name
            header = self._parts.headers.get(col) if self._parts is not None else None
            if header is not None:  # made already (the rest of the grid may still be in the making)
                header.setText(name)

    def names_pair(self) -> tuple[str, str]:
        """What the first two columns are called: ("baseline", "edited") or ("first", "second")."""
        return self.names["baseline"], self.names["edited"]

    def _follow(self, row: str, moved: pg.ViewBox) -> None:
        """Pan and zoom the row's three views together (same range, view coordinates = pixels)."""
        if getattr(self, "_following", False):
            return
        self._following = True
        try:
            rect = moved.viewRect()
            for col in COLS:
                view = self._parts.views[row, col]  # made with its row (while the next rows are made)
                if view is not moved:
                    view.setRange(rect, padding=0)
        finally:
            self._following = False

    def clear_row(self, row: str) -> None:
        self.shown.pop(row, None)
        if not self.made:
            return  # nothing drawn yet
        for col in COLS:
            self.images[row, col].clear()
        for (bar_row, _name), bar in self.bars.items():  # no colour range over an empty row
            if bar_row == row:
                bar.setVisible(False)

    def clear_all(self) -> None:
        for row in ROWS:
            self.clear_row(row)

    def show_row(self, row: str, key: str, before, after) -> bool:
        """Draw one row; False (row cleared) when either side is missing or the shapes differ."""
        return self.draw_row(row, self.prepare_row(row, key, before, after))

    def prepare_row(self, row: str, key: str, before, after) -> Prepared | None:
        """What `draw_row` draws: the row's three mosaics and their levels, worked out with nothing drawn (the
        Compare tab works a row out in one turn, draws it and paints it in the next); None when either side is
        missing or the shapes differ."""
        if before is None or after is None or np.shape(before) != np.shape(after):
            return None
        diverging = row != "activation"
        base = make_mosaic(before, key=key, tokens=self.tokens, layouts=self.layouts)
        edited = make_mosaic(after, key=key, tokens=self.tokens, layouts=self.layouts)
        diff = edited.image - base.image
        lo, hi = levels(np.concatenate([base.image.reshape(-1), edited.image.reshape(-1)]), diverging)
        bound = max(abs(v) for v in levels(diff, True))
        return Prepared(Shown(key, base, (base.image, edited.image, diff)), (lo, hi), (-bound, bound))

    def draw_row(self, row: str, prepared: Prepared | None) -> bool:
        """Draw a row `prepare_row` worked out; False (the row cleared) for None."""
        if prepared is None:
            self.clear_row(row)
            return False
        shown, shared, difference = prepared.shown, prepared.shared, prepared.difference
        for col, image, lv in zip(COLS, shown.images, (shared, shared, difference)):
            self.images[row, col].setImage(image, autoLevels=False, levels=lv)
        self.bars[row, "shared"].setLevels(shared)
        self.bars[row, "difference"].setLevels(difference)
        for name in ("shared", "difference"):
            self.bars[row, name].setVisible(True)
        self.views[row, "baseline"].autoRange(padding=0.01)
        self.shown[row] = shown
        return True

    def value_text(self, row: str, image_row: float, image_col: float) -> str | None:
        """"KEY channel c (y, x)   baseline v   edited v   difference v" (the columns' names) at a mosaic pixel."""
        shown = self.shown.get(row)
        hit = shown.mosaic.channel_at(image_row, image_col) if shown else None
        if hit is None:
            return None
        r, c = int(image_row), int(image_col)
        values = "   ".join(f"{self.names[col]} {fmt(im[r, c], '.5g')}" for col, im in zip(COLS, shown.images))
        return f"{shown.key}   channel {hit[0]}   y {hit[1]}, x {hit[2]}   {values}"

    def _under(self, scene_pos) -> tuple[str, float, float] | None:
        """(row, image row, image col) under a scene point, or None outside every view."""
        if not self.made:
            return None
        for (row, _col), view in self.views.items():
            if view.sceneBoundingRect().contains(scene_pos):
                point = view.mapSceneToView(scene_pos)
                return row, point.y(), point.x()
        return None

    def _on_mouse_moved(self, scene_pos) -> None:
        under = self._under(scene_pos)
        text = self.value_text(*under) if under else None
        if text is not None:
            self.hover_text = text
            if self.on_hover is not None:
                self.on_hover(text)

    def _on_mouse_clicked(self, event) -> None:
        under = self._under(event.scenePos())
        shown = self.shown.get(under[0]) if under else None
        hit = shown.mosaic.channel_at(under[1], under[2]) if shown else None
        if hit is not None:
            self.sigChannelClicked.emit(shown.key, hit[0])
