"""Compare methods: the same input and target under every chosen attribution method, side by side, each
over the input with its own colour bar and a line with its deletion and insertion AUC and the time it
took. The state asks for the methods one after another (`AnalysisState.compare`), each scored, so the worker stays
latest-wins and Esc stops the rest; `export` writes the maps (.npz), the numbers (.json) and the picture
(.png), each whole or not at all."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from inspector.core.clipping import clip_levels

from .heat_colours import colormap_for
from .number_format import fmt



class MethodComparison(QWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.canvas = pg.GraphicsLayoutWidget()
        self.status = QLabel(" ")
        self.status.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.canvas, 1)
        self.bottom = QHBoxLayout()  # the status, and what the view puts beside it (Export)
        self.bottom.addWidget(self.status, 1)
        layout.addLayout(self.bottom)
        self.methods: tuple[str, ...] = ()
        self.found: dict[str, object] = {}  # method -> its Attribution, as they arrive
        self.failed: dict[str, str] = {}
        self.picture: np.ndarray | None = None
        self.titles: dict[str, pg.LabelItem] = {}
        self.asks: dict[str, tuple[str, str | None]] = {}

    def start(self, methods: tuple[str, ...], picture: np.ndarray | None,
              asks: dict[str, tuple[str, str | None]] | None = None) -> None:
        """A new comparison of `methods` over `picture` (the input as the model sees it, H x W x 3). With
        `asks`, each of `methods` is a cell's name, asking for (method, target) (a detector's boxes, each
        under one method: "box:0 star 0.87" -> ("gradcam", "box:0")); else each method for the view's target."""
        self.methods, self.found, self.failed, self.picture = tuple(methods), {}, {}, picture
        self.asks = dict(asks) if asks else {m: (m, None) for m in self.methods}
        self.canvas.clear()
        self.titles = {}
        cols = min(3, len(self.methods))
        for i, method in enumerate(self.methods):
            row, col = divmod(i, cols)
            self.titles[method] = self.canvas.addLabel(f"{method}: waiting", row=2 * row, col=2 * col, colspan=2)
        self.status.setText(f"Comparing {len(self.methods)} methods…")

    def next_method(self) -> str | None:
        """The next method to ask for, None when every one has come (or failed)."""
        return next((m for m in self.methods if m not in self.found and m not in self.failed), None)

    def add(self, method: str, found, picture: np.ndarray | None = None) -> None:
        """The cell `method`'s map has come: draw it in its cell, over `picture` (None: the comparison's)."""
        if method not in self.methods or method in self.found:
            return
        self.found[method] = found
        cols = min(3, len(self.methods))
        row, col = divmod(self.methods.index(method), cols)
        view = self.canvas.addViewBox(row=2 * row + 1, col=2 * col, lockAspect=True, invertY=True)
        view.setMenuEnabled(False)
        values, signed = found.picture, found.shown_sign == "signed"  # the picture scored (records.signs)
        picture = self.picture if picture is None else picture
        if picture is not None and picture.shape[:2] == values.shape:
            view.addItem(pg.ImageItem(picture, axisOrder="row-major", levels=(0, 255)))
        levels = clip_levels(values, signed=signed)
        heat = pg.ImageItem(values, axisOrder="row-major", levels=levels)
        heat.setOpacity(0.6)
        view.addItem(heat)
        bar = pg.ColorBarItem(values=levels, colorMap=colormap_for(found.shown_sign), width=10, interactive=False)
        bar.setImageItem(heat)
        self.canvas.addItem(bar, row=2 * row + 1, col=2 * col + 1)
        view.autoRange(padding=0.01)
        self.titles[method].setText(self.line(method, found))
        self._say()

    def fail(self, method: str, message: str) -> None:
        """The cell `method` failed (or was cancelled): said in its cell."""
        if method in self.methods and method not in self.found:
            self.failed[method] = message
            self.titles[method].setText(f"{method}: {message}")
            self._say()

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

    def _say(self) -> None:
        done = len(self.found) + len(self.failed)
        left = self.next_method()
        boxes = any(target for _method, target in self.asks.values())
        scored = any(found.curves for found in self.found.values())
        what = "boxes, each map on its own scale" if boxes else "methods"
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

    def export(self, base: Path) -> list[Path]:
        """BASE.npz (a map per method), BASE.json (settings, scores, times), BASE.png (the grid as shown)."""
        from PySide6.QtCore import QBuffer, QIODevice

        from inspector.core.writes import save_npz, write_bytes, write_json

        buffer = QBuffer()
        buffer.open(QIODevice.WriteOnly)
        self.canvas.grab().save(buffer, "PNG")
        written = [base.with_suffix(".npz"), base.with_suffix(".json"), base.with_suffix(".png")]
        save_npz(written[0], {m: np.asarray(f.map) for m, f in self.found.items()})
        write_json(written[1], self.report(), indent=1)
        write_bytes(written[2], bytes(buffer.data()))
        return written
