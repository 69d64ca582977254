"""The toolbar's choosers: model, weights, input, device, target."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QCompleter, QSizePolicy, QWidget

from inspector.core.sources.refs import DEMO_NAMES

WEIGHTS = ("random", "pretrained")
CATALOGUE = "torchvision and timm models…"


def searchable(combo: QComboBox) -> QComboBox:
    combo.setEditable(True)
    combo.setInsertPolicy(QComboBox.NoInsert)
    completer = combo.completer()
    completer.setFilterMode(Qt.MatchContains)
    completer.setCompletionMode(QCompleter.PopupCompletion)
    edit = combo.lineEdit()
    # A choice set by the program or from the list reads from its first letter (the line edit puts its cursor at
    # the end, which scrolls the start of a text longer than the box away); text being typed (the line edit's
    # modified flag) keeps its cursor.
    edit.textChanged.connect(lambda _text: edit.isModified() or edit.setCursorPosition(0))
    return combo


def completes(combo: QComboBox, say) -> QComboBox:
    """Enter on part of a name in a searchable chooser picks the one item holding it (as the popup lists them),
    or says through `say(text)` that several or none do, naming a few: it never does nothing silently."""
    edit = combo.lineEdit()

    def entered() -> None:
        text = edit.text().strip()
        names = [combo.itemText(i) for i in range(combo.count())]
        if not text or text in names:
            return
        found = [i for i, name in enumerate(names) if text.lower() in name.lower()]
        if len(found) == 1:
            combo.setCurrentIndex(found[0])
            edit.setText(names[found[0]])
            return
        if not found:
            say(f"No layer holds {text!r}: type part of a layer's name (conv, layer4.2).")
            return
        shown = ", ".join(names[i] for i in found[:4]) + (", ..." if len(found) > 4 else "")
        say(f"{len(found)} layers hold {text!r} ({shown}): type more of the name, or pick one from the list.")

    edit.returnPressed.connect(entered)
    return combo


def content_free(combo: QComboBox, chars: int) -> QComboBox:
    """A chooser whose width does not follow its items (`chars` characters wide, the whole choice in its
    tooltip): a long layer, class or model name never widens the centre and squeezes the docks."""
    combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(chars)
    combo.currentTextChanged.connect(combo.setToolTip)
    return combo


class ModelCombo(QComboBox):
    """demo, files the user opened and, once asked for, every torchvision classifier and segmentation
    model and every timm model (`timm:NAME`); searchable.

    Listing them imports torchvision and timm (seconds), so the list is filled only when the user
    picks its entry (sigCatalogueWanted) or types a name.

    Signals
    -------
    sigChosen(str): a model source was picked or typed.
    sigCatalogueWanted(): the user asked for the list of torchvision and timm models.
    """

    sigChosen = Signal(str)
    sigCatalogueWanted = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        searchable(self)
        self.setMinimumContentsLength(14)
        self.addItems([*DEMO_NAMES, CATALOGUE])
        self._shown = "demo"
        self.activated.connect(self._on_activated)
        self.lineEdit().returnPressed.connect(lambda: self._choose(self.currentText().strip()))

    def _on_activated(self, index: int) -> None:
        self._choose(self.itemText(index))

    def _choose(self, text: str) -> None:
        if text == CATALOGUE:
            self.set_source(self._shown)  # keep showing what is loaded while the list comes
            self.sigCatalogueWanted.emit()
        elif text:
            self.sigChosen.emit(text)

    def set_catalogue(self, names: list[str]) -> None:
        i = self.findText(CATALOGUE)
        if i >= 0:
            self.removeItem(i)
        self.addItems([n for n in names if self.findText(n) < 0])
        self.set_source(self._shown)
        self.showPopup()

    def set_source(self, source: str) -> None:
        """Show `source` (what is loaded, or being loaded)."""
        self._shown = source
        if self.findText(source) < 0:
            self.insertItem(1, source)
        self.setCurrentIndex(self.findText(source))


class DeviceCombo(QComboBox):
    """The machine's devices (known once the engine has loaded) and, marked, a device asked for that it lacks."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.devices: list[tuple[str, str]] = [("cpu", "CPU")]
        self.set_devices(self.devices)

    def set_devices(self, devices: list[tuple[str, str]], current: str | None = None) -> None:
        current = current or self.device()
        self.devices = list(devices)
        self.blockSignals(True)
        self.clear()
        for name, description in self.devices:
            self.addItem(f"{name} — {description}", name)
        self.blockSignals(False)
        self.set_device(current)

    def device(self) -> str:
        return self.currentData() or "cpu"

    def set_device(self, name: str) -> None:
        """Show `name`; one this machine lacks is shown as not available, never swapped for another."""
        self.blockSignals(True)
        i = self.findData(name)
        if i < 0:
            self.addItem(f"{name} — not available", name)
            i = self.count() - 1
        self.setCurrentIndex(i)
        self.blockSignals(False)


class TargetCombo(QComboBox):
    """top-1, sum, output, or any class by label (searchable)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        searchable(self)
        self.setMinimumContentsLength(16)
        self.set_labels(None)
        self.setEditText("auto")  # the state's target until a model's labels come (not "sum of output")

    def set_labels(self, labels: list[str] | None, dense: bool = False, boxes: bool = False) -> None:
        """Targets for a classifier's `labels`; with `dense` (a segmentation), each class over all pixels;
        with `boxes` (a detector), its best detections (a click on a box picks any other)."""
        self.blockSignals(True)
        self.clear()
        if boxes:
            self.addItem("auto (the best box)", "auto")
            for k in range(5):
                self.addItem(f"box:{k}: detection {k + 1} by score", f"box:{k}")
            self.setCurrentIndex(0)
            self.blockSignals(False)
            return
        if dense:
            self.addItem("auto (most pixels)", "auto")
            for i, label in enumerate(labels or []):
                self.addItem(f"seg:{i}: {label}, all pixels", f"seg:{i}")
            self.addItem("sum of output", "sum")
            self.setCurrentIndex(0)
            self.blockSignals(False)
            return
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
        if data is None or self.currentText() != self.itemText(self.currentIndex()):
            # typed text that matched no item: "index: label", a number or seg:CLASS[@box]
            text = self.currentText().strip()
            if text.lower().startswith("seg:"):
                return text.split(" ", 1)[0]
            if text.lower().startswith(("box:", "text:")):
                return text  # a class name may hold spaces (box:1,2,3,4@traffic light), a prompt too
            head = text.split(":", 1)[0].strip()
            return head if head.isdigit() else "auto"
        return data

    def set_target(self, value: str) -> None:
        i = self.findData(value)
        if i >= 0:
            self.setCurrentIndex(i)
        elif value:
            self.setEditText(value)  # a target no item names (seg:CLASS@box, box:X0,Y0,X1,Y1@CLASS): as typed


#: Model kinds whose weights can be made at random under a seed, and those with pretrained weights.
RANDOM_KINDS = ("torchvision", "timm", "hf", "python")
PRETRAINED_KINDS = ("torchvision", "timm", "hf")


class WeightsCombo(QComboBox):
    """Where the weights come from; random weights show their seed, so a run can be repeated.

    Signals
    -------
    sigChosen(str, object): ("random", seed or None for a new one) | ("pretrained", None) |
        ("checkpoint", None) | ("seed", None): the user wants to type a seed.
    """

    sigChosen = Signal(str, object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizeAdjustPolicy(QComboBox.AdjustToContents)
        # as wide as its longest choice, never squeezed: a full toolbar takes its room from the model and input
        # choosers, which elide a long path ("pretrained (folder" lost its end at 1280x800)
        self.setSizePolicy(QSizePolicy.Minimum, self.sizePolicy().verticalPolicy())
        self.addItem("…", ("keep", None))  # until a model has loaded: never a choice it did not make
        self.activated.connect(lambda i: self.sigChosen.emit(*self.itemData(i)))

    def show_loaded(self, info) -> None:
        """Show the loaded model's weights; offer what its source can load instead."""
        self.blockSignals(True)
        self.clear()
        if info.seed is not None:
            self.addItem(f"random (seed {info.seed})", ("random", info.seed))
        else:  # pretrained, a checkpoint, the demo's bundled weights, a saved program's
            self.addItem(info.weights, ("keep", None))
        if info.kind in RANDOM_KINDS:
            self.addItem("random, new seed", ("random", None))
            self.addItem("random, seed…", ("seed", None))
        if info.kind in PRETRAINED_KINDS and not info.weights.startswith("pretrained"):
            self.addItem("pretrained", ("pretrained", None))
        self.addItem("checkpoint…", ("checkpoint", None))
        self.setCurrentIndex(0)
        self.blockSignals(False)
