"""The Attribution tab's method options: steps and quadrature (ig), what is smoothed and how (smoothgrad),
window and stride (occlusion), masks, cell and probability (D-RISE), the baseline (ig, occlusion and the
scores), and whether to score the map with deletion and insertion. Only the options of the chosen method
are shown."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from inspector.core.records.requests import BASELINES, METHOD_OPTIONS, QUADRATURES, SMOOTH_KINDS, SMOOTHED

PER_ROW = 3  # options side by side
BASELINE_NAMES = BASELINES
FROM_FILE = "file…"  # the baseline chooser's last entry: a picture or tensor file of the input's size


def _spin(low: int, high: int, value: int, auto: str | None = None) -> QSpinBox:
    box = QSpinBox()
    box.setRange(low, high)
    box.setValue(value)
    if auto:
        box.setSpecialValueText(auto)  # the lowest value means "work it out"
    return box


def _combo(items, current: str) -> QComboBox:
    box = QComboBox()
    box.addItems(list(items))
    box.setCurrentText(current)
    return box


class AttributionOptions(QWidget):
    """`values(method)` is what the method's request carries; `show_for(method)` shows only its options."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        noise = QDoubleSpinBox()
        noise.setRange(0.0, 1.0)
        noise.setSingleStep(0.05)
        noise.setDecimals(3)
        noise.setValue(0.15)
        noise.setToolTip("The noise's standard deviation, as a fraction of the input's range")
        probability = QDoubleSpinBox()
        probability.setRange(0.05, 1.0)
        probability.setSingleStep(0.05)
        probability.setValue(0.5)
        probability.setToolTip("D-RISE: the chance that a cell of a mask keeps the image")
        self.widgets = {
            "steps": _spin(1, 5000, 50),
            "quadrature": _combo(QUADRATURES, "gausslegendre"),
            "of": _combo(SMOOTHED, "saliency"),
            "kind": _combo(SMOOTH_KINDS, "smoothgrad"),
            "samples": _spin(1, 5000, 25),
            "noise": noise,
            "seed": _spin(-1, 2**31 - 1, -1, "new"),
            "window": _spin(0, 4096, 0, "auto"),
            "stride": _spin(0, 4096, 0, "auto"),
            "baseline": _combo((*BASELINE_NAMES, FROM_FILE), "zero"),
            "masks": _spin(1, 100_000, 500),
            "cell": _spin(0, 4096, 0, "auto"),
            "probability": probability,
        }
        self._baseline_at = 0  # the baseline chosen before "file…", for a dialog cancelled
        self.widgets["baseline"].activated.connect(self._on_baseline)
        self.widgets["seed"].setToolTip("The seed of the noise or the masks ('new': a fresh one, said under the map)")
        self.widgets["masks"].setToolTip("D-RISE: how many random masks (more: a smoother map, slower)")
        self.widgets["cell"].setToolTip("D-RISE: a mask cell's side in pixels (auto: a sixteenth of the input's side)")
        self.widgets["window"].setToolTip("The occluding window's side in pixels (auto: a tenth of the input's side)")
        self.widgets["stride"].setToolTip("Pixels between windows (auto: half the window)")
        self.widgets["baseline"].setToolTip("What integrated gradients start from, occlusion fills windows with and "
                                            "the scores put in place of the input")
        self.scores = QCheckBox("Deletion / insertion")
        self.scores.setToolTip("Score the map's faithfulness: the target's probability as the most salient pixels "
                               "are deleted (replaced by the baseline) or inserted into it")
        self.labels = {name: QLabel(name.capitalize()) for name in self.widgets}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.rows = [QHBoxLayout(), QHBoxLayout()]  # at most PER_ROW options a row: the tab stays narrow
        for row in self.rows:
            layout.addLayout(row)
        self.show_for("gradcam")

    def _on_baseline(self, index: int) -> None:
        box = self.widgets["baseline"]
        if box.itemText(index) != FROM_FILE:
            self._baseline_at = index
            return
        path = self.choose_file()
        if not path:
            box.setCurrentIndex(self._baseline_at)
            return
        self.add_baseline_file(path)

    def choose_file(self) -> str:
        from inspector.gui import file_dialogs

        return file_dialogs.open_file(self, "input", "Baseline: a picture or tensor of the input's size",
                                      file_dialogs.INPUT_FILES)

    def add_baseline_file(self, path: str) -> None:
        """Offer `path` as a baseline (named by its file, the whole path in its tooltip) and choose it."""
        box = self.widgets["baseline"]
        at = box.findData(path)
        if at < 0:
            at = box.count() - 1  # before "file…"
            box.insertItem(at, Path(path).name, path)
            box.setItemData(at, path, Qt.ToolTipRole)
        box.setCurrentIndex(at)
        self._baseline_at = at

    def restore(self, options: dict) -> None:
        """Show `options` (as `values` gives them; a session's), leaving the rest as they are."""
        w = self.widgets
        for name in ("steps", "samples", "masks"):
            if isinstance(options.get(name), int):
                w[name].setValue(options[name])
        for name in ("quadrature", "of", "kind"):
            if w[name].findText(str(options.get(name))) >= 0:
                w[name].setCurrentText(str(options[name]))
        for name in ("noise", "probability"):
            if isinstance(options.get(name), (int, float)) and not isinstance(options.get(name), bool):
                w[name].setValue(float(options[name]))
        if "seed" in options:
            w["seed"].setValue(options["seed"] if isinstance(options["seed"], int) else -1)
        for name in ("window", "stride", "cell"):
            if name in options:
                w[name].setValue(options[name] if isinstance(options[name], int) else 0)
        baseline = options.get("baseline")
        if isinstance(baseline, str) and baseline:
            if baseline in BASELINE_NAMES:
                w["baseline"].setCurrentText(baseline)
                self._baseline_at = w["baseline"].currentIndex()
            else:
                self.add_baseline_file(baseline)

    def uses_baseline(self, method: str) -> bool:
        return "baseline" in METHOD_OPTIONS.get(method, ()) or self.scores.isChecked()

    def show_for(self, method: str) -> None:
        wanted = set(METHOD_OPTIONS.get(method, ()))
        if self.scores.isChecked():
            wanted.add("baseline")  # the scores need one whatever the method
        shown = [name for name in self.widgets if name in wanted]
        for row in self.rows:
            while row.count():
                row.takeAt(0)
        for i, name in enumerate(shown):
            row = self.rows[min(i // PER_ROW, len(self.rows) - 1)]
            row.addWidget(self.labels[name])
            row.addWidget(self.widgets[name])
        for row in self.rows:
            row.addStretch(1)
        for name, widget in self.widgets.items():
            widget.setVisible(name in wanted)
            self.labels[name].setVisible(name in wanted)

    def values(self, method: str) -> dict:
        """The options for `method` (names as inspector.core.attribution takes them); with "metrics"."""
        w = self.widgets
        found: dict = {}
        names = METHOD_OPTIONS.get(method, ())
        if "steps" in names:
            found.update(steps=w["steps"].value(), quadrature=w["quadrature"].currentText())
        if "samples" in names:
            seed = w["seed"].value()
            found.update(of=w["of"].currentText(), kind=w["kind"].currentText(), samples=w["samples"].value(),
                         noise=float(w["noise"].value()), seed=None if seed < 0 else seed)
        if "window" in names:
            found.update(window=w["window"].value() or None, stride=w["stride"].value() or None)
        if "masks" in names:
            seed = w["seed"].value()
            found.update(masks=w["masks"].value(), cell=w["cell"].value() or None,
                         probability=round(float(w["probability"].value()), 4), seed=None if seed < 0 else seed)
        if self.uses_baseline(method):
            found["baseline"] = w["baseline"].currentData() or w["baseline"].currentText()  # a file: its path
        found["metrics"] = ("deletion", "insertion") if self.scores.isChecked() else ()
        return found
