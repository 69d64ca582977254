"""Baseline | edited | difference for a layer picked here, the input gradient and predictions; or,
against a second model, first | second | difference with the divergence by depth.

The baseline (no edits) result is kept by the worker while model, input, device and
target stay the same, so this view never re-runs it. Its layer picker is its own: the
window fills it (`set_layers`) and answers `sigLayerChosen` by calling `show` with that
layer's keys. The "Against" picker asks (`sigAgainstWanted`) for the baseline, a weights file
or another model; "Edits on" says which model the edits apply to (`sigEditsOn`).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.core.compare.diff import prediction_deltas
from inspector.core.pictures.mosaic import PAGE
from inspector.core.engine.result import RunResult

from ...common.controls import content_free, searchable
from ...common.paint_turns import after_paint
from .box_changes_view import BoxChangesView
from .grid import COLS, ROWS, CompareGrid  # noqa: F401  (ROWS, COLS: the grid's names)
from .divergence_view import DivergenceView
from ..number_format import fmt

#: The "Against" picker's choices: what each asks for.
BASELINE, WEIGHTS, MODEL = "the run without edits", "a weights file…", "another model…"
MIN_VIEW = 150  # pixels: the least height of one row of mosaics
EDITS_ON = {"both models": "both", "first model": "first", "second model": "second"}


class CompareView(QWidget):
    """Signals
    -------
    sigLayerChosen(str): the user picked this layer in the view's own picker.
    sigAgainstWanted(str): "baseline", "weights" or "model": what to compare against.
    sigEditsOn(str): "both", "first" or "second": which model the edits apply to.
    sigChannelClicked(str, int): the user clicked a channel of a mosaic: the row's key and the channel.
    """

    sigLayerChosen = Signal(str)
    sigAgainstWanted = Signal(str)
    sigEditsOn = Signal(str)
    sigChannelClicked = Signal(str, int)

    @property
    def images(self):
        """The grid's image items by (row, column) (made on first use)."""
        return self.grid.images

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.layer = content_free(searchable(QComboBox()), 12)
        self.layer.currentIndexChanged.connect(self._on_layer)
        self.grid = CompareGrid()
        self.canvas = self.grid
        self.caption = QLabel("Add an edit to compare against the baseline.")
        self.caption.setWordWrap(True)
        self.caption.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)  # a long path never widens the tab
        self.hover = QLabel(" ")
        self.grid.on_hover = self.hover.setText
        self.grid.sigChannelClicked.connect(self.sigChannelClicked)
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["Class", "Baseline", "Edited", "Δ"])
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.Stretch)
        self.table.setMinimumWidth(220)
        self.against = content_free(QComboBox(), 12)
        self.against.activated.connect(self._on_against)
        self.edits_on = QComboBox()
        self.edits_on.addItems(list(EDITS_ON))
        self.edits_on.setToolTip("With a second model: which model the edits apply to")
        self.edits_on.activated.connect(lambda _i: self.sigEditsOn.emit(EDITS_ON[self.edits_on.currentText()]))
        self.edits_on_label = QLabel("Edits on")
        self.divergence = DivergenceView()
        self.boxes = BoxChangesView()  # a detector's: what became of each box
        self.boxes.hide()
        self._boxes_sized = False
        self._drawing, self._pending_done = 0, None  # a drawing in turns (_show_rows): its number, its `done`
        head = QHBoxLayout()
        head.addWidget(QLabel("Layer"))
        head.addWidget(self.layer, 1)
        head.addWidget(QLabel("Against"))
        head.addWidget(self.against)
        head.addWidget(self.edits_on_label)
        head.addWidget(self.edits_on)
        bottom = QSplitter(Qt.Horizontal)
        bottom.addWidget(self.divergence)
        bottom.addWidget(self.boxes)
        bottom.addWidget(self.table)
        for i in range(3):
            bottom.setStretchFactor(i, 1)
        self.bottom = bottom
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        self.scroll = QScrollArea()  # rows never shrink below MIN_VIEW: they scroll instead
        self.scroll.setWidgetResizable(True)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.scroll.setFrameShape(QScrollArea.NoFrame)
        self.grid.setMinimumHeight(len(ROWS) * MIN_VIEW + 30)
        self.scroll.setWidget(self.grid)
        top_layout.addWidget(self.scroll, 1)
        top_layout.addWidget(self.hover)
        split = QSplitter(Qt.Vertical)
        split.addWidget(top)
        split.addWidget(bottom)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        split.setSizes([640, 150])
        self.split = split
        layout = QVBoxLayout(self)
        layout.addLayout(head)
        layout.addWidget(self.caption)
        layout.addWidget(split, 1)
        self.set_against(None)

    def set_against(self, name: str | None) -> None:
        """Show what the comparison is against: None (the baseline) or the second model's name."""
        self.against.blockSignals(True)
        self.against.clear()
        self.against.addItem(BASELINE, "baseline")
        if name:
            self.against.addItem(name, "keep")
        self.against.addItem(WEIGHTS, "weights")
        self.against.addItem(MODEL, "model")
        self.against.setCurrentIndex(1 if name else 0)
        self.against.blockSignals(False)
        self.against_name = name
        for widget in (self.edits_on, self.edits_on_label):
            widget.setVisible(bool(name))
        self.divergence.setVisible(bool(name))
        total = max(sum(self.split.sizes()), 400)
        self.split.setSizes([int(total * 0.7), int(total * 0.3)] if name else [int(total * 0.8), int(total * 0.2)])
        self.grid.set_names(*(("first", "second") if name else ("baseline", "edited")))
        headers = ("First", "Second") if name else ("Baseline", "Edited")
        self.table.setHorizontalHeaderLabels(["Class", *headers, "Δ"])
        if not name:
            self.divergence.clear()
        self.caption.setText(f"Against {name}: run to compare." if name else
                             "Add an edit to compare against the baseline, or pick a second model above.")

    def set_edits_on(self, which: str) -> None:
        self.edits_on.setCurrentText(next(k for k, v in EDITS_ON.items() if v == which))

    def _on_against(self, index: int) -> None:
        wanted = self.against.itemData(index)
        if wanted != "keep":
            self.sigAgainstWanted.emit(wanted)

    def set_layers(self, names: list[str], current: str | None = None) -> None:
        """Fill the picker with `names` and select `current`, without emitting sigLayerChosen."""
        self.layer.blockSignals(True)
        self.layer.clear()
        for name in names:
            self.layer.addItem(name, name)
        self.layer.setCurrentIndex(max(self.layer.findData(current), 0) if names else -1)
        self.layer.blockSignals(False)

    def _on_layer(self, index: int) -> None:
        name = self.layer.itemData(index)
        if name:
            self.sigLayerChosen.emit(name)

    def set_backdrop(self, rgb, min_score: float | None, detecting: bool = True) -> None:
        """The input picture a detector's boxes are drawn over, and the score they are shown from; a model
        that detects nothing (`detecting` False) leaves no boxes of the last one here."""
        if not detecting:
            self.boxes.show_changes(None, None, self.grid.names_pair())
        self.boxes.set_backdrop(rgb, min_score)  # drawn, and the table filled, with the result's boxes

    def set_min_score(self, value: float) -> None:
        self.boxes.set_min_score(value)
        if self.boxes.isVisible():
            self._fill_box_table()

    def clear(self) -> None:
        self._supersede()
        self.grid.clear_all()
        self.divergence.clear()
        self.boxes.show_changes(None, None, self.grid.names_pair())
        self.table.setRowCount(0)
        self.hover.setText(" ")

    def show(self, baseline: RunResult | None, edited: RunResult, activation_key: str, gradient_key: str,
             done: Callable[[], None] | None = None) -> None:
        """The comparison at these keys, drawn now; with `done`, a row an event-loop turn (each painted before
        the next is made, so the window answers between them), then `done()` (also when a newer drawing
        takes over)."""
        if baseline is None or baseline is edited:
            self.clear()
            self.caption.setText("No edits are on: the baseline is the result. Add or enable an edit to compare, "
                                 "or pick a second model above.")
            if done is not None:
                done()
            return
        self._show_rows(baseline, edited, activation_key, gradient_key, [f"Edits: {', '.join(edited.edits) or 'none'}"],
                        done)

    def show_models(self, diff, activation_key: str, gradient_key: str, done: Callable[[], None] | None = None) -> None:
        """First | second | difference from a ModelDiff (inspector.core.compare.diff), with the divergence plot."""
        first, second = diff.first, diff.second
        verdict = (f"first divergent: {diff.first_divergent}" if diff.first_divergent
                   else f"no activation differs by more than {fmt(diff.threshold)}")
        notes = [f"first: {diff.names[0]}", f"second: {diff.names[1]}", verdict]
        if first.edits or second.edits:
            notes.append(f"edits: first {', '.join(first.edits) or 'none'}; second {', '.join(second.edits) or 'none'}")
        for side, keys in (("first", diff.only_in_first), ("second", diff.only_in_second)):
            if keys:
                notes.append(f"only in the {side}: {len(keys)} key(s), e.g. {keys[0]}")
        self.divergence.show_diff(diff)
        self._show_rows(first, second, activation_key, gradient_key, notes, done)

    def _supersede(self) -> None:
        """Stop a drawing in turns (a newer one, or a clear, takes over); its `done` is still called."""
        self._drawing += 1
        pending, self._pending_done = self._pending_done, None
        if pending is not None:
            pending()

    def _show_rows(self, baseline: RunResult, edited: RunResult, activation_key: str, gradient_key: str,
                   notes: list[str], done: Callable[[], None] | None = None) -> None:
        self._supersede()
        drawing, self._pending_done = self._drawing, done
        rows = list({"activation": activation_key, "gradient": gradient_key, "input gradient": "input:grad"}.items())

        def step(i: int, prepared=None) -> None:
            if drawing != self._drawing:
                return  # a newer drawing took over (and called `done`)
            while i < len(rows):
                if done is None:  # all now
                    self._draw_row(rows[i], self._prepare_row(baseline, edited, *rows[i]), notes)
                    i += 1
                    continue
                # In turns: a row's mosaics and levels worked out in one, drawn and painted in the next (together
                # they made the detector's longest turn), the next row's worked out once that is painted. Each
                # next turn is timed from the paint's end (after_paint): a timer started before the paint fell due
                # during it and ran at once, before the timers that fell due later (a heartbeat, an animation),
                # so a row's paint and the next row's mosaics (or the boxes) made one stall.
                if prepared is None:
                    prepared = self._prepare_row(baseline, edited, *rows[i])
                    after_paint(self, lambda: step(i, prepared))
                    return
                self._draw_row(rows[i], prepared, notes)
                after_paint(self, lambda: step(i + 1))
                return
            self._show_boxes_and_table(baseline, edited, notes)
            finished, self._pending_done = self._pending_done, None
            if finished is not None:
                finished()

        step(0)

    def _prepare_row(self, baseline: RunResult, edited: RunResult, row: str, key: str):
        if row == "input gradient":
            before, after = baseline.input_grad, edited.input_grad
        else:
            a, b = baseline.captures.get(key), edited.captures.get(key)
            before, after = (a.array if a else None), (b.array if b else None)
        return self.grid.prepare_row(row, key, before, after)

    def _draw_row(self, row_key: tuple[str, str], prepared, notes: list[str]) -> None:
        row, key = row_key
        if not self.grid.draw_row(row, prepared):
            notes.append(f"{row}: nothing to compare at {key}")
        elif (total := self.grid.shown[row].mosaic.total) > PAGE:
            notes.append(f"{row}: channels 0-{PAGE - 1} of {total}")

    def _show_boxes_and_table(self, baseline: RunResult, edited: RunResult, notes: list[str]) -> None:
        self.caption.setText(" · ".join(notes))
        self.boxes.show_changes(baseline.detections, edited.detections, self.grid.names_pair())
        if self.boxes.isVisibleTo(self):
            if not self._boxes_sized:  # room for the picture, once (the user's own split is kept after)
                total = max(sum(self.split.sizes()), 400)
                self.split.setSizes([int(total * 0.55), int(total * 0.45)])
                width = max(sum(self.bottom.sizes()), 400)
                shown = [self.divergence.isVisibleTo(self), True, True]
                self.bottom.setSizes([int(width / sum(shown)) if on else 0 for on in shown])
                self._boxes_sized = True
            self._fill_box_table()
            return
        self.table.setHorizontalHeaderLabels(["Class", *self._headers(), "Δ"])
        deltas = prediction_deltas(baseline, edited)
        self.table.setRowCount(len(deltas))
        for r, d in enumerate(deltas):
            for c, text in enumerate((d.label, fmt(d.first, ".2%"), fmt(d.second, ".2%"), fmt(d.delta, "+.2%"))):
                self.table.setItem(r, c, _cell(text))

    def _headers(self) -> tuple[str, str]:
        return tuple(name.capitalize() for name in self.grid.names_pair())

    def _fill_box_table(self) -> None:
        """A detector's objects, one row each: its class, its score in either run ("-": not found) and what
        became of it (with the IoU of its two boxes)."""
        if not self.boxes.isVisibleTo(self):
            return
        before, after = self.boxes.before, self.boxes.after
        self.table.setHorizontalHeaderLabels(["Box", *self._headers(), "Change"])
        header = self.table.horizontalHeader()
        fitted = [header.sectionResizeMode(i) for i in range(self.table.columnCount())]
        for i in range(len(fitted)):  # fitted once, not at every cell (100 boxes' cells took 0.3 s)
            header.setSectionResizeMode(i, QHeaderView.Interactive)
        self.table.setRowCount(len(self.boxes.changes))
        for r, c in enumerate(self.boxes.changes):
            found = after[c.after] if c.after is not None else before[c.before]
            change = c.kind + (f", IoU {c.iou:.2f}" if c.kind in ("kept", "moved") else "")
            cells = (f"{found.name} ({found.label})", fmt(before[c.before].score, ".3f") if c.before is not None
                     else "-", fmt(after[c.after].score, ".3f") if c.after is not None else "-", change)
            for col, text in enumerate(cells):
                self.table.setItem(r, col, _cell(text))
        for i, mode in enumerate(fitted):
            header.setSectionResizeMode(i, mode)


def _cell(text: str) -> QTableWidgetItem:
    """A cell of the predictions' or boxes' table, its whole text in its tooltip (a narrow tab elides class names:
    "st…" for "stripes")."""
    item = QTableWidgetItem(text)
    item.setToolTip(text)
    return item
