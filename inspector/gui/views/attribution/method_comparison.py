"""Compare methods: the same input and target under every chosen attribution method, side by side, each
over the input with its own colour bar and a line with its deletion and insertion AUC and the time it
took. The state asks for the methods one after another (`AnalysisState.compare`), each scored, so the worker stays
latest-wins and Esc stops the rest; `export` writes the maps (.npz), the numbers (.json) and the picture
(.png: the figure drawn from the maps, every cell with its colour bar and caption, not the screen), each whole
or not at all. On screen the grid scrolls, with as many columns as the width holds (three at most), rather
than squeezing its cells out of sight."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSize, QSizeF, Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QScrollArea, QSplitter, QVBoxLayout, QWidget

from inspector.core.pictures.clipping import clip_levels
from inspector.core.pictures.fit import covers
from inspector.core.target.text import target_words

from ...figures.draw import Figure, FigureCell
from ..colour_bar import colour_bar
from ...common.heat_colours import colormap_for
from ..number_format import fmt
from .trust_panel import TrustPanel

COLUMNS = 3  # at most, side by side
CELL_MIN = 150  # a cell's map on screen is never squeezed below this many pixels a side: the grid scrolls
BAR_ROOM = 60  # a colour bar with its numbers
OPACITY = 0.6  # of a map over its picture


class MethodComparison(QWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.canvas = pg.GraphicsLayoutWidget()
        self.scroll = QScrollArea()  # the grid keeps its cells' size and scrolls (issue 39, item 8)
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.NoFrame)
        self.scroll.setWidget(self.canvas)
        self.status = QLabel(" ")
        self.status.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.trust = TrustPanel()  # "Check these maps" and the maps' trust cards, under the maps (a splitter)
        self.split = QSplitter(Qt.Vertical)
        self.split.addWidget(self.scroll)
        self.split.addWidget(self.trust)
        self.split.setStretchFactor(0, 3)
        self.split.setStretchFactor(1, 2)
        self.split.setChildrenCollapsible(False)
        layout.addWidget(self.split, 1)
        self.bottom = QHBoxLayout()  # the status, and what the view puts beside it (Export)
        self.bottom.addWidget(self.status, 1)
        layout.addLayout(self.bottom)
        self.methods: tuple[str, ...] = ()
        self.found: dict[str, object] = {}  # method -> its Attribution, as they arrive
        self.failed: dict[str, str] = {}
        self.picture: np.ndarray | None = None
        self.titles: dict[str, pg.LabelItem] = {}
        self.cells: dict[str, tuple] = {}  # method -> (its view box, its colour bar), once its map came
        self.pictures: dict[str, np.ndarray | None] = {}  # method -> the picture its map was drawn over
        self.levels: dict[str, tuple[float, float]] = {}
        self.asks: dict[str, tuple[str, str | None]] = {}
        self.columns = COLUMNS

    def start(self, methods: tuple[str, ...], picture: np.ndarray | None,
              asks: dict[str, tuple[str, str | None]] | None = None) -> None:
        """A new comparison of `methods` over `picture` (the input as the model sees it, H x W x 3). With
        `asks`, each of `methods` is a cell's name, asking for (method, target) (a detector's boxes, each
        under one method: "box:0 star 0.87" -> ("gradcam", "box:0")); else each method for the view's target."""
        self.methods, self.found, self.failed, self.picture = tuple(methods), {}, {}, picture
        self.trust.clear()  # the cards were of the maps before
        self.asks = dict(asks) if asks else {m: (m, None) for m in self.methods}
        self.canvas.clear()
        self.titles = {m: pg.LabelItem(f"{m}: waiting") for m in self.methods}
        self.cells, self.pictures, self.levels = {}, {}, {}
        self.columns = self._columns_that_fit()
        self._place()
        self.status.setText(f"Comparing {len(self.methods)} methods…")

    def next_method(self) -> str | None:
        """The next method to ask for, None when every one has come (or failed)."""
        return next((m for m in self.methods if m not in self.found and m not in self.failed), None)

    def add(self, method: str, found, picture: np.ndarray | None = None) -> None:
        """The cell `method`'s map has come: draw it in its cell, over `picture` (None: the comparison's)."""
        if method not in self.methods or method in self.found:
            return
        self.found[method] = found
        view = pg.ViewBox(lockAspect=True, invertY=True)
        view.setMenuEnabled(False)
        view.setMinimumSize(CELL_MIN, CELL_MIN)
        values, signed = found.picture, found.shown_sign == "signed"  # the picture scored (records.signs)
        picture = self.picture if picture is None else picture
        if picture is not None and covers(picture.shape, values.shape):
            under = pg.ImageItem(picture, axisOrder="row-major", levels=(0, 255))
            under.setRect(0, 0, values.shape[1], values.shape[0])  # a larger picture (a box drawn): over the map
            view.addItem(under)
        levels = clip_levels(values, signed=signed)
        heat = pg.ImageItem(values, axisOrder="row-major", levels=levels)
        heat.setOpacity(OPACITY)
        view.addItem(heat)
        bar = colour_bar(levels, colormap_for(found.shown_sign), 10)
        bar.setImageItem(heat)
        self.cells[method], self.pictures[method], self.levels[method] = (view, bar), picture, levels
        row, col = divmod(self.methods.index(method), self.columns)
        self.canvas.ci.addItem(view, row=2 * row + 1, col=2 * col)
        self.canvas.ci.addItem(bar, row=2 * row + 1, col=2 * col + 1)
        view.autoRange(padding=0.01)
        made = "<br>".join(self.settings_lines(found))  # vargrad of ig, 8 steps: not a plain "smoothgrad"
        self.titles[method].setText(self.line(method, found) + (f"<br><small>{made}</small>" if made else ""))
        self._fit()
        self._say()

    def fail(self, method: str, message: str) -> None:
        """The cell `method` failed (or was cancelled): said in its cell."""
        if method in self.methods and method not in self.found:
            self.failed[method] = message
            self.titles[method].setText(f"{method}: {message}")
            self._fit()
            self._say()

    # -- the grid on screen: as many columns as fit, then it scrolls ---------------------------------
    def _columns_that_fit(self) -> int:
        room = self.scroll.width() - self.scroll.verticalScrollBar().sizeHint().width() - 8
        cell = max([CELL_MIN + BAR_ROOM] + [t.minimumWidth() for t in self.titles.values()]) + 12
        return max(1, min(COLUMNS, len(self.methods) or 1, int(room // cell)))

    def _place(self) -> None:
        """Every cell at its place in `columns` columns: its title over its map and colour bar."""
        layout = self.canvas.ci
        for method in self.methods:
            for item in (self.titles[method], *self.cells.get(method, ())):
                if item in layout.items:
                    layout.removeItem(item)
        for i, method in enumerate(self.methods):
            row, col = divmod(i, self.columns)
            layout.addItem(self.titles[method], row=2 * row, col=2 * col, colspan=2)
            if method in self.cells:
                view, bar = self.cells[method]
                layout.addItem(view, row=2 * row + 1, col=2 * col)
                layout.addItem(bar, row=2 * row + 1, col=2 * col + 1)
        self._fit(place=False)

    def _fit(self, place: bool = True) -> None:
        """Fewer columns when the cells no longer fit the width; the canvas as large as its cells need, so
        that the scroll area scrolls to any of them instead of clipping it."""
        if place and self._columns_that_fit() != self.columns:
            self.columns = self._columns_that_fit()
            self._place()
            return
        layout = self.canvas.ci.layout
        self._equal_cells(layout)
        layout.invalidate()
        need = layout.effectiveSizeHint(Qt.MinimumSize)
        self.canvas.setMinimumSize(QSize(int(need.width()) + 2, int(need.height()) + 2))

    def _equal_cells(self, layout) -> None:
        """Every map's view the same size (Each box's tiles were not: a longer title widened its column): every
        title asks for the widest one's width, the view columns and rows share one minimum and the stretch."""
        for which, set_width in ((Qt.MinimumSize, "setMinimumWidth"), (Qt.PreferredSize, "setPreferredWidth")):
            widest = max([t.sizeHint(which, QSizeF()).width() for t in self.titles.values()] or [0])
            for title in self.titles.values():
                getattr(title, set_width)(widest)
        for col in range(self.columns):
            layout.setColumnMinimumWidth(2 * col, CELL_MIN)
            layout.setColumnStretchFactor(2 * col, 1)
            layout.setColumnStretchFactor(2 * col + 1, 0)
        for row in range(-(-len(self.methods) // self.columns)):
            layout.setRowStretchFactor(2 * row, 0)
            layout.setRowMinimumHeight(2 * row + 1, CELL_MIN)
            layout.setRowStretchFactor(2 * row + 1, 1)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.methods:
            self._fit()

    @staticmethod
    def line(method: str, found) -> str:
        scores = {c.metric: c.auc for c in found.curves}
        parts = [method, found.shown_sign]
        if "deletion" in scores:
            parts.append(f"del {fmt(scores['deletion'], '.3f')}")
        if "insertion" in scores:
            parts.append(f"ins {fmt(scores['insertion'], '.3f')}")
        seconds = dict(found.details).get("seconds")
        if seconds is not None:
            parts.append(f"{seconds:.2f} s")
        return " · ".join(parts)

    @staticmethod
    def settings_lines(found, width: int = 44) -> list[str]:
        """How the map was made (its settings but method, sign and target, which the title says), in lines of
        about `width` characters: under a cell's title, so that a narrow cell grows taller, not wider."""
        made = {k: v for k, v in found.settings.items() if k not in ("method", "sign", "target")}
        words = [f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in made.items()]
        lines: list[str] = []
        for word in words:
            if lines and len(lines[-1]) + len(word) + 2 <= width:
                lines[-1] += ", " + word
            else:
                lines.append(word)
        return lines

    def _say(self) -> None:
        done = len(self.found) + len(self.failed)
        left = self.next_method()
        targets = [target for _method, target in self.asks.values() if target]  # Each box's or Each prompt's
        scored = any(found.curves for found in self.found.values())
        kinds = {"text:": "prompts", "box:": "boxes"}
        what = (next((w for k, w in kinds.items() if targets[0].startswith(k)), "maps") + ", each map on its own scale"
                if targets else "methods")
        self.status.setText(f"{done} of {len(self.methods)} {what}" + (f"; computing {left}…" if left else
                            "; deletion: lower is better, insertion: higher is better (AUC of the target's "
                            "probability)." if scored else "."))

    def report(self) -> dict:
        """The numbers of the comparison, for JSON."""
        rows = {}
        for method, found in self.found.items():
            rows[method] = {"method": found.method, "sign": found.shown_sign, "target": found.target,
                            "target_index": found.target_index, "layer": found.layer,
                            "settings": {k: (v.item() if hasattr(v, "item") else v) for k, v in found.details
                                         if k != "baseline is"},
                            "metrics": {c.metric: c.as_json() for c in found.curves}}
        return {"methods": rows, "failed": dict(self.failed)}

    # -- the figure: drawn from the maps, never grabbed ------------------------------------------------
    def figure_cells(self) -> list[FigureCell]:
        """A figure's cell for each method that came or failed, in the comparison's order."""
        cells = []
        for method in self.methods:
            if method in self.found:
                found = self.found[method]
                cells.append(FigureCell(self.line(method, found), self.caption_lines(found), found.picture,
                                        self.pictures.get(method), self.levels[method], found.shown_sign, OPACITY,
                                        colours=colormap_for(found.shown_sign)))
            elif method in self.failed:
                cells.append(FigureCell(f"{method}: failed", (self.failed[method],), failed=True))
        return cells

    @staticmethod
    def caption_lines(found) -> tuple[str, ...]:
        """What a figure's cell says under its map: its target (and layer), its settings (Attribution.settings),
        what its scores are."""
        if found.target_detection is not None and found.detections:
            box = found.detections[found.target_detection]
            what = f"for box:{found.target_detection} ({box.name} {box.score:.2f})"
        elif found.target_index is not None:
            what = f"for class {found.target_index}"
        else:
            what = f"for {target_words(found.target)}" if found.target else "class-agnostic"
        lines = [what + (f" · layer {found.layer}" if found.layer else "")]
        settings = [f"{k} {fmt(v, '.3g') if isinstance(v, float) else v}" for k, v in found.settings.items()
                    if k not in ("method", "sign", "target", "layer") and v is not None]
        if found.completeness_gap is not None:
            settings.append(f"completeness gap {fmt(found.completeness_gap, '.3g')}")
        if settings:
            lines.append(", ".join(settings))
        if found.curves:
            curve = found.curves[0]
            lines.append(f"scored by {curve.score_of}" + (f", {curve.order}" if curve.order else ""))
        return tuple(lines)

    def figure(self, caption: str = "", side: int | None = None) -> Figure:
        """The comparison as a figure: every cell that came, `side` px maps, `caption` under them."""
        return Figure(self.figure_cells(), caption, **({"side": side} if side else {}))

    def export(self, base: Path, scale: float = 1.0, about: dict | None = None, caption: str = "") -> list[Path]:
        """BASE.npz (a map per method), BASE.json (settings, scores, times; `about`: the model, weights and seed,
        input the maps are of), BASE.png (the figure of every cell at `scale`, drawn from the maps: not clipped by
        the window, no controls; `caption` under it)."""
        from inspector.core.storage.writes import save_npz, write_bytes, write_json

        written = [base.with_suffix(".npz"), base.with_suffix(".json"), base.with_suffix(".png")]
        picture = self.figure(caption).png(scale)
        save_npz(written[0], {m: np.asarray(f.map) for m, f in self.found.items()})
        write_json(written[1], {**({"about": about} if about else {}), **self.report()}, indent=1)
        write_bytes(written[2], picture)
        return written
