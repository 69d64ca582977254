"""The edits panel: the list of edit hooks, each with an on/off toggle, in the order they apply.

Add an edit from the form (layer, site, op, argument fields), as typed text in the CLI's
syntax (`relu1:grad_input=clamp(min=0)`), from a preset, from the module tree's context
menu, or by clicking channels of the activation mosaic (channel ablation) or heads of an attention
map (head ablation).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from inspector.core.edits import OPS, Edit
from inspector.core.edits.presets import PRESETS
from inspector.core.common.keys import layer_of

EDIT_SITES = ("grad_output", "grad_input", "output", "input", "weight:grad", "bias:grad")


class ArgumentForm(QWidget):
    """One field per argument of the chosen op: spin boxes for numbers, text for channel lists and folders."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.form = QFormLayout(self)
        self.form.setContentsMargins(0, 0, 0, 0)
        self.fields: dict[str, QWidget] = {}

    def set_op(self, op: str) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        self.fields = {}
        spec = OPS[op]
        for i, name in enumerate(spec.params):
            row = None
            if name == "channels":
                field = QLineEdit("[0]")
            elif name == "dict":  # a concept edit's dictionary: the folder `network-inspector concepts` wrote
                field = QLineEdit(placeholderText="concepts folder")
                row = QHBoxLayout()
                row.addWidget(field, 1)
                browse = QToolButton(text="…")
                browse.setToolTip("Choose the concepts folder (dictionary.safetensors, made by `network-inspector "
                                  "concepts` or the Concepts dock's Build…)")
                browse.clicked.connect(lambda _c=False, f=field: self._browse_concepts(f))
                row.addWidget(browse)
            else:
                field = QDoubleSpinBox()
                field.setDecimals(4)
                field.setRange(-1e6, 1e6)
                field.setValue({"k": 2.0, "std": 0.1, "max": 1.0}.get(name, 0.0))
                if i >= spec.required:  # optional: an explicit "none" choice
                    field.setSpecialValueText("none")
                    field.setMinimum(-1e6 - 1)
                    field.setValue(0.0 if name == "min" else field.minimum())
            self.fields[name] = field
            self.form.addRow(name, row if row is not None else field)

    def _browse_concepts(self, field: QLineEdit) -> None:
        from inspector.gui.common import file_dialogs

        path = file_dialogs.choose_folder(self, "concepts-out", "Concepts folder (with dictionary.safetensors)",
                                          field.text(), engine=True)
        if path:
            field.setText(path)

    def text(self) -> str:
        parts = []
        for name, field in self.fields.items():
            if isinstance(field, QLineEdit):
                text = field.text().strip()
                parts.append(f"{name}={text!r}" if name == "dict" else f"{name}={text}")
            elif field.value() != field.minimum() or not field.specialValueText():
                value = field.value()
                parts.append(f"{name}={int(value) if name in ('seed', 'id') else value!r}")
        return ", ".join(parts)


class EditsPanel(QWidget):
    """Shows the edits list it is given (`set_edits`) and says what the user asked for; the state
    (`AppState.editing`) makes the change and gives the new list back.

    Signals
    -------
    sigAddText(str, bool): add the edit written as KEY=OP(ARGS) (True: typed in the text box, which
        is cleared once it was added).
    sigEnabled(int, bool): switch edit `row` on or off.
    sigMove(int, int): move edit `row` by `step` (-1 up, +1 down).
    sigDelete(int): delete edit `row`.
    sigAllOff(): switch every edit off.
    sigDeleteAll(): delete every edit.
    sigUndo(): undo the last change to the list.
    sigPreset(str, str, float): add preset `name` on `layer` with factor `k`.
    """

    sigAddText = Signal(str, bool)
    sigEnabled = Signal(int, bool)
    sigMove = Signal(int, int)
    sigDelete = Signal(int)
    sigAllOff = Signal()
    sigDeleteAll = Signal()
    sigUndo = Signal()
    sigPreset = Signal(str, str, float)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.list = QListWidget()
        self.list.itemChanged.connect(self._on_item_changed)
        self.text = QLineEdit(placeholderText="KEY=OP(ARGS), e.g. relu1:grad_input=clamp(min=0)")
        self.text.setMinimumWidth(60)
        self.text.returnPressed.connect(self._on_add_text)
        self.message = QLabel(" ")
        self.message.setWordWrap(True)
        self.layer = QComboBox()
        self.layer.setEditable(True)
        self.layer.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)  # long paths: no wider dock
        self.layer.setMinimumContentsLength(10)
        self.site = QComboBox()
        self.site.addItems(EDIT_SITES)
        self.op = QComboBox()
        self.op.addItems(list(OPS))
        self.args = ArgumentForm()
        self.op.currentTextChanged.connect(self.args.set_op)
        self.args.set_op(self.op.currentText())
        self.ablate = QCheckBox("Ablate: click channels or heads")
        self.ablate.setToolTip("Click a channel of the activation mosaic (or a head of an attention map) to zero "
                               "it; click it again to bring it back")

        add = QPushButton("Add")
        add.clicked.connect(self._on_add_form)
        add_text = QPushButton("Add text")
        add_text.clicked.connect(self._on_add_text)
        presets = QToolButton(text="Presets", popupMode=QToolButton.InstantPopup)
        presets.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
        menu = QMenu(presets)
        for name in PRESETS:
            menu.addAction(name, lambda n=name: self.choose_preset(n))
        presets.setMenu(menu)
        buttons = QGridLayout()  # two rows: the whole set fits the dock's width
        self.undo_button = QPushButton("Undo")
        self.undo_button.setToolTip("Undo the last change to the edits (Ctrl+Z)")
        self.undo_button.setShortcut(QKeySequence.Undo)
        self.undo_button.setEnabled(False)
        self.undo_button.clicked.connect(self.sigUndo.emit)
        for i, (label, slot) in enumerate((("Up", lambda: self.sigMove.emit(self.list.currentRow(), -1)),
                                           ("Down", lambda: self.sigMove.emit(self.list.currentRow(), 1)),
                                           ("Delete", lambda: self.sigDelete.emit(self.list.currentRow())),
                                           ("Delete all", self.sigDeleteAll.emit),
                                           ("All off", self.sigAllOff.emit))):
            button = QPushButton(label)
            button.clicked.connect(slot)
            buttons.addWidget(button, i // 3, i % 3)
        buttons.addWidget(self.undo_button, 1, 2)
        buttons.addWidget(presets, 2, 0, 1, 3)

        form = QFormLayout()
        form.addRow("Layer", self.layer)
        form.addRow("Site", self.site)
        form.addRow("Op", self.op)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)
        layout.addLayout(form)
        layout.addWidget(self.args)
        layout.addWidget(add)
        row = QHBoxLayout()
        row.addWidget(self.text, 1)
        row.addWidget(add_text)
        layout.addLayout(row)
        layout.addWidget(self.ablate)
        layout.addWidget(self.message)
        self._edits: list[Edit] = []

    # -- the list ----------------------------------------------------------------------
    def edits(self) -> tuple[Edit, ...]:
        """The edits shown (the state's, as last given)."""
        return tuple(self._edits)

    def set_edits(self, edits) -> None:
        row = self.list.currentRow()
        self._edits = list(edits)
        self.list.blockSignals(True)
        self.list.clear()
        for edit in self._edits:
            item = QListWidgetItem(str(edit))
            item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
            item.setCheckState(Qt.Checked if edit.enabled else Qt.Unchecked)
            self.list.addItem(item)
        if 0 <= row < len(self._edits):
            self.list.setCurrentRow(row)
        self.list.blockSignals(False)

    def set_undoable(self, undoable: bool) -> None:
        self.undo_button.setEnabled(undoable)

    def select_row(self, row: int) -> None:
        self.list.setCurrentRow(row)

    def show_message(self, text: str, error: bool = False) -> None:
        self.message.setText(f"<span style='color:#b00'>{text}</span>" if error else text)

    def _on_item_changed(self, item: QListWidgetItem) -> None:
        row = self.list.row(item)
        enabled = item.checkState() == Qt.Checked
        if 0 <= row < len(self._edits) and self._edits[row].enabled != enabled:
            self.sigEnabled.emit(row, enabled)

    # -- adding -------------------------------------------------------------------------
    def set_layers(self, layer_types: dict[str, str]) -> None:
        current = self.layer.currentText()
        self.layer.clear()
        self.layer.addItems(list(layer_types))
        if current in layer_types:
            self.layer.setCurrentText(current)

    def form_text(self) -> str:
        layer, site = self.layer.currentText().strip(), self.site.currentText()
        if site.endswith(":grad"):
            key = f"{layer}.{site.split(':')[0]}:grad"
        else:
            key = f"{layer}:{site}"
        return f"{key}={self.op.currentText()}({self.args.text()})"

    def _on_add_form(self) -> None:
        self.sigAddText.emit(self.form_text(), False)

    def _on_add_text(self) -> None:
        self.sigAddText.emit(self.text.text(), True)

    def set_layer(self, layer: str | None) -> None:
        """The form (and the presets that act on one layer) follow the layer selected in the app."""
        if layer:
            self.layer.setCurrentText(layer_of(layer))

    def choose_preset(self, name: str) -> None:
        """Preset `name` on the form's layer (asking for k where it takes one)."""
        k = 2.0
        layer = self.layer.currentText().strip()
        if "by k" in name:
            k, ok = QInputDialog.getDouble(self, name, f"Scale the gradient of {layer or '(no layer)'} by k:",
                                           2.0, -1e6, 1e6, 4)
            if not ok:
                return
        self.sigPreset.emit(name, layer, k)
