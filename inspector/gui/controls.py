"""The toolbar's choosers: model, weights, input, device, target."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QCompleter, QWidget

from inspector.core.devices import available_devices

WEIGHTS = ("random", "pretrained")


def searchable(combo: QComboBox) -> QComboBox:
    combo.setEditable(True)
    combo.setInsertPolicy(QComboBox.NoInsert)
    completer = combo.completer()
    completer.setFilterMode(Qt.MatchContains)
    completer.setCompletionMode(QCompleter.PopupCompletion)
    return combo


class ModelCombo(QComboBox):
    """demo, every torchvision classifier, and files the user opened; searchable."""

    sigChosen = Signal(str)

    def __init__(self, names: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        searchable(self)
        self.setMinimumContentsLength(18)
        self.addItem("demo")
        self.addItems(names)
        self.activated.connect(lambda i: self.sigChosen.emit(self.itemText(i)))
        self.lineEdit().returnPressed.connect(lambda: self.sigChosen.emit(self.currentText().strip()))

    def set_source(self, source: str) -> None:
        if self.findText(source) < 0:
            self.addItem(source)
        self.setCurrentIndex(self.findText(source))


class DeviceCombo(QComboBox):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        for info in available_devices():
            self.addItem(f"{info.name} — {info.description}", info.name)

    def device(self) -> str:
        return self.currentData() or "cpu"

    def set_device(self, name: str) -> None:
        i = self.findData(name)
        self.setCurrentIndex(i if i >= 0 else 0)


class TargetCombo(QComboBox):
    """top-1, sum, output, or any class by label (searchable)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        searchable(self)
        self.setMinimumContentsLength(16)
        self.set_labels(None)

    def set_labels(self, labels: list[str] | None) -> None:
        self.blockSignals(True)
        self.clear()
        if labels:
            self.addItem("top-1", "top1")
        self.addItem("sum of output", "sum")
        self.addItem("output (one value)", "output")
        for i, label in enumerate(labels or []):
            self.addItem(f"{i}: {label}", str(i))
        self.setCurrentIndex(0)
        self.blockSignals(False)

    def target(self) -> str:
        data = self.currentData()
        if data is None:  # typed text that matched no item: try "index: label" or a number
            head = self.currentText().split(":", 1)[0].strip()
            return head if head.isdigit() else "auto"
        return data

    def set_target(self, value: str) -> None:
        i = self.findData(value)
        if i >= 0:
            self.setCurrentIndex(i)
