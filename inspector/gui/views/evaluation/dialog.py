"""The Evaluate… dialog: the images folder, the output folder, the methods (those Compare all offers for a class),
the metrics (the evaluation's metric table, read when the dialog opens: a metric registered since is offered), the
protocol deletion and insertion follow and its steps, as `network-inspector evaluate` takes them."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGridLayout,
    QLabel,
    QSpinBox,
    QWidget,
)

from inspector.core.evaluate.metrics import METRIC_ROWS
from inspector.core.records.methods import METHODS, compared
from inspector.core.records.protocols import DEFAULT_PROTOCOL, PROTOCOLS
from inspector.gui.common import file_dialogs

from ..folder_job import FolderJobDialog

COLUMNS = 4  # check boxes a row
DEFAULT_METHODS = ("saliency", "gradcam")
DEFAULT_METRICS = ("deletion", "insertion")


def _boxes(names, ticked, tips) -> tuple[QWidget, dict[str, QCheckBox]]:
    holder = QWidget()
    grid = QGridLayout(holder)
    grid.setContentsMargins(0, 0, 0, 0)
    boxes = {}
    for i, name in enumerate(names):
        box = boxes[name] = QCheckBox(name)
        box.setChecked(name in ticked)
        box.setToolTip(tips.get(name, ""))
        grid.addWidget(box, i // COLUMNS, i % COLUMNS)
    return holder, boxes


class EvaluateDialog(FolderJobDialog):
    """`last`: the choices of the last evaluation asked for (offered again: the same choices resume a job
    cancelled), as `choices()` gives them; None: the defaults."""

    def __init__(self, parent=None, last: tuple | None = None) -> None:
        super().__init__("evaluation", "Evaluate attribution methods over a folder", parent, data_also="atlas-data")
        _data, _out, methods, metrics, protocol, steps = last or ("", "", DEFAULT_METHODS, DEFAULT_METRICS,
                                                                   DEFAULT_PROTOCOL, None)
        if last:
            self.data.setText(last[0])
            self.out.setText(last[1])
        holder, self.methods = _boxes(compared(boxes=False), methods,
                                      {m.name: f"{m.title}: {m.help}" for m in METHODS.values()})
        metric_holder, self.metrics = _boxes(list(METRIC_ROWS), metrics,
                                             {m.name: f"{m.name} ({', '.join(m.numbers)}): {m.help}"
                                              for m in METRIC_ROWS.values()})
        self.protocol = QComboBox()
        for name, rule in PROTOCOLS.items():
            self.protocol.addItem(name, name)
            self.protocol.setItemData(self.protocol.count() - 1, rule.source, 3)  # Qt.ToolTipRole
        self.steps = QSpinBox(minimum=1, maximum=10_000)
        self.steps.setToolTip("Deletion's and insertion's steps K, where the protocol takes one")
        self.protocol.currentIndexChanged.connect(lambda _i: self._offer_steps())
        self.protocol.setCurrentIndex(max(self.protocol.findData(protocol), 0))
        self._offer_steps(steps)
        form = self.form
        form.addRow(QLabel("Each method's map of every image in the folder, scored by each metric; the window shows "
                           "the mean per method with its 95 % interval. Cancel (or Esc) stops after an image, and "
                           "evaluating again with the same choices goes on from there.", wordWrap=True))
        self._folder_rows()
        form.addRow("Methods", holder)
        form.addRow("Metrics", metric_holder)
        form.addRow("Protocol", self.protocol)
        form.addRow("Steps", self.steps)
        self._finish(640)
        self.buttons.button(self.buttons.StandardButton.Ok).setText("Evaluate")

    def _offer_steps(self, steps: int | None = None) -> None:
        """The steps of a protocol that takes them (its own K first), greyed for one that fixes them."""
        rule = PROTOCOLS[self.protocol.currentData()]
        self.steps.setEnabled(rule.steps is not None)
        self.steps.setValue(steps or rule.steps or 1)
        self.steps.setSpecialValueText("" if rule.steps is not None else "fixed by the protocol")
        if rule.steps is None:
            self.steps.setValue(self.steps.minimum())  # the special text shows

    def choices(self) -> tuple[str, str, tuple[str, ...], tuple[str, ...], str, int | None]:
        """(images folder, output folder, methods, metrics, protocol, steps (None: fixed by the protocol))."""
        protocol = self.protocol.currentData()
        return (self.data.text().strip(), self.out.text().strip(),
                tuple(n for n, box in self.methods.items() if box.isChecked()),
                tuple(n for n, box in self.metrics.items() if box.isChecked()), protocol,
                self.steps.value() if PROTOCOLS[protocol].steps is not None else None)

    def problem(self) -> str:
        data, out, methods, metrics, _protocol, _steps = self.choices()
        if not data:
            return "Choose the folder of images to evaluate over."
        if file_dialogs.engine_files(self) is None and not Path(data).is_dir():  # (a server's: it says so)
            return f"{data} is not a folder."
        if not methods:
            return "Tick at least one method."
        if not metrics:
            return "Tick at least one metric."
        if not out:
            return "Choose the folder to write the evaluation to."
        return ""
