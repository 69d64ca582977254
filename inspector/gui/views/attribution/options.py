"""The Attribution tab's method options, made from the method table (inspector.core.records.methods): a
spin box, a number box or a chooser per option the app offers, its range, default and help from the
table; the baseline (the method's, and the scores'), and whether to score the map with deletion and
insertion. Only the options of the chosen method are shown (SmoothGrad of ig: ig's steps, quadrature and
baseline too)."""

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

from inspector.core.records.methods import BASELINES, METHODS, Option, app_options

PER_ROW = 3  # options side by side
BASELINE_NAMES = BASELINES
FROM_FILE = "file…"  # the baseline chooser's last entry: a picture or tensor file of the input's size


def _widget(option: Option) -> QWidget:
    """The box an option is set in: its range and default from the table; where None is allowed (`auto`),
    the value below the range says so ("auto", "new") and means None."""
    if option.kind == "whole":
        box = QSpinBox()
        low = int(option.low if option.low is not None else 0)
        box.setRange(low - 1 if option.auto else low, int(option.high if option.high is not None else 2**31 - 1))
        if option.auto:
            box.setSpecialValueText(option.auto)
        box.setValue(option.default if option.default is not None else box.minimum())
    elif option.kind == "number":
        box = QDoubleSpinBox()
        box.setDecimals(3)
        box.setRange(float(option.low or 0.0), float(option.high if option.high is not None else 1e9))
        box.setSingleStep(0.05)
        box.setValue(float(option.default))
    else:  # a choice, or the baseline (a name, or a file chosen from its last entry)
        box = QComboBox()
        box.addItems(list(option.choices) + ([FROM_FILE] if option.kind == "baseline" else []))
        box.setCurrentText(str(option.default if option.default is not None else option.auto))
    box.setToolTip(option.help[0].upper() + option.help[1:])
    return box


def _app_options() -> dict[str, Option]:
    """Every option some method offers in the app, by name (the first method's where two share a name)."""
    found: dict[str, Option] = {}
    for method in METHODS.values():
        for option in method.options:
            if option.app:
                found.setdefault(option.name, option)
    return found


class AttributionOptions(QWidget):
    """`values(method)` is what the method's request carries; `show_for(method)` shows only its options."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.table = _app_options()
        self.widgets = {name: _widget(option) for name, option in self.table.items()}
        self._baseline_at = 0  # the baseline chosen before "file…", for a dialog cancelled
        self.widgets["baseline"].activated.connect(self._on_baseline)
        self.widgets["seed"].setToolTip("The seed of the noise or the masks ('new': a fresh one, said under the map)")
        self.scores = QCheckBox("Deletion / insertion")
        self.scores.setToolTip("Score the map's faithfulness: the target's probability as the most salient pixels "
                               "are deleted (replaced by the baseline) or inserted into it")
        self.labels = {name: QLabel(name.replace("_", " ").capitalize()) for name in self.widgets}
        self.labels["tolerance"].setText("Tolerance (× |f(x) − f(b)|)")  # a fraction; the gap is said in f's units
        self._quadrature_tip = self.widgets["quadrature"].toolTip()
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
        from inspector.gui.common import file_dialogs

        return file_dialogs.open_file(self, "input", "Baseline: a picture or tensor of the input's size",
                                      file_dialogs.INPUT_FILES, engine=True)

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
        for name, value in options.items():
            option, box = self.table.get(name), self.widgets.get(name)
            if option is None or isinstance(value, bool):
                continue
            if option.kind == "whole" and (isinstance(value, int) or (value == option.auto_value and option.auto)):
                box.setValue(box.minimum() if value == option.auto_value else value)
            elif option.kind == "number" and isinstance(value, (int, float)):
                box.setValue(float(value))
            elif option.kind == "choice" and box.findText(str(value)) >= 0:
                box.setCurrentText(str(value))
            elif option.kind == "baseline" and isinstance(value, str) and value:
                if value in BASELINE_NAMES:
                    box.setCurrentText(value)
                    self._baseline_at = box.currentIndex()
                else:
                    self.add_baseline_file(value)

    def _current(self) -> dict:
        """Every option's value now (what an option's `when` reads: SmoothGrad's `of`, ig's steps "auto")."""
        return {name: self.value(name) for name in self.widgets}

    def offered(self, method: str) -> tuple[str, ...]:
        """The options of `method` the app offers now (SmoothGrad of ig: ig's too)."""
        return app_options(method, self._current())

    def uses_baseline(self, method: str) -> bool:
        return "baseline" in self.offered(method) or self.scores.isChecked()

    def show_for(self, method: str) -> None:
        wanted = set(self.offered(method))
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
        auto = self.value("steps") == self.table["steps"].auto_value  # its own nested trapezoid: no quadrature
        for widget in (self.widgets["quadrature"], self.labels["quadrature"]):
            widget.setEnabled(not auto)
        self.widgets["quadrature"].setToolTip("Steps auto integrates by its own nested trapezoid rule: the "
                                              "quadrature applies to a number of steps" if auto else
                                              self._quadrature_tip)

    def value(self, name: str):
        """Option `name` as the method takes it: None where the box says "auto" or "new"; a baseline file: its path."""
        option, box = self.table[name], self.widgets[name]
        if option.kind == "whole":
            return option.auto_value if option.auto and box.value() == box.minimum() else box.value()
        if option.kind == "number":
            return round(float(box.value()), 4)
        if option.kind == "baseline":
            return box.currentData() or box.currentText()
        return box.currentText()

    def values(self, method: str) -> dict:
        """The options for `method` (names as inspector.core.attribution takes them); with "metrics"."""
        found = {name: self.value(name) for name in self.offered(method) if name != "baseline"}
        if self.uses_baseline(method):
            found["baseline"] = self.value("baseline")
        found["metrics"] = ("deletion", "insertion") if self.scores.isChecked() else ()
        return found
