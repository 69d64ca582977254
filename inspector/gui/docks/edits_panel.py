"""The edits panel: the list of edit hooks, each with an on/off toggle, in the order they apply.

Add an edit from the form (layer, site, op, argument fields), as typed text in the CLI's
syntax (`relu1:grad_input=clamp(min=0)`), from a preset, from the module tree's context
menu, or by clicking channels of the activation mosaic (channel ablation) or heads of an attention
map (head ablation).
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from inspector.core.edits import OPS, Edit, parse_edit
from inspector.core.errors import SpecError
from inspector.core.keys import Key, layer_of
from inspector.core.presets import PRESETS

EDIT_SITES = ("grad_output", "grad_input", "output", "input", "weight:grad", "bias:grad")


class ArgumentForm(QWidget):
    """One field per argument of the chosen op: spin boxes for numbers, text for channel lists."""

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
            if name == "channels":
                field = QLineEdit("[0]")
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
            self.form.addRow(name, field)

    def text(self) -> str:
        parts = []
        for name, field in self.fields.items():
            if isinstance(field, QLineEdit):
                parts.append(f"{name}={field.text().strip()}")
            elif field.value() != field.minimum() or not field.specialValueText():
                value = field.value()
                parts.append(f"{name}={int(value) if name == 'seed' else value!r}")
        return ", ".join(parts)


class EditsPanel(QWidget):
    """Signals
    -------
    sigEditsChanged(object): the tuple of edits (enabled or not) in order, after any change.
    """

    sigEditsChanged = Signal(object)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._edits: list[Edit] = []
        self.list = QListWidget()
        self.list.itemChanged.connect(self._on_item_changed)
        self.text = QLineEdit(placeholderText="KEY=OP(ARGS), e.g. relu1:grad_input=clamp(min=0)")
        self.text.returnPressed.connect(self._on_add_text)
        self.message = QLabel(" ")
        self.message.setWordWrap(True)
        self.layer = QComboBox()
        self.layer.setEditable(True)
        self.site = QComboBox()
        self.site.addItems(EDIT_SITES)
        self.op = QComboBox()
        self.op.addItems(list(OPS))
        self.args = ArgumentForm()
        self.op.currentTextChanged.connect(self.args.set_op)
        self.args.set_op(self.op.currentText())
        self.ablate = QCheckBox("Click mosaic channels (or attention heads) to zero them")

        add = QPushButton("Add")
        add.clicked.connect(self._on_add_form)
        add_text = QPushButton("Add text")
        add_text.clicked.connect(self._on_add_text)
        presets = QToolButton(text="Presets", popupMode=QToolButton.InstantPopup)
        menu = QMenu(presets)
        for name in PRESETS:
            menu.addAction(name, lambda n=name: self._on_preset(n))
        presets.setMenu(menu)
        buttons = QHBoxLayout()
        for label, slot in (("Up", lambda: self.move(-1)), ("Down", lambda: self.move(1)),
                            ("Delete", self.delete_selected), ("All off", self.all_off)):
            button = QPushButton(label)
            button.clicked.connect(slot)
            buttons.addWidget(button)
        buttons.addWidget(presets)

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
        self.layer_types: dict[str, str] = {}
        self.param_names: list[str] = []

    # -- the list ----------------------------------------------------------------------
    def edits(self) -> tuple[Edit, ...]:
        return tuple(self._edits)

    def set_edits(self, edits) -> None:
        self._edits = list(edits)
        self._refill()

    def add(self, edit: Edit) -> None:
        self._edits.append(edit)
        self._refill()

    def add_text(self, text: str) -> bool:
        try:
            edit = parse_edit(text)
        except SpecError as exc:
            self.message.setText(f"<span style='color:#b00'>{exc}</span>")
            return False
        self.message.setText(f"added {edit}")
        self.add(edit)
        return True

    def set_enabled(self, row: int, enabled: bool) -> None:
        self._edits[row] = replace(self._edits[row], enabled=enabled)
        self._refill()

    def move(self, step: int) -> None:
        row = self.list.currentRow()
        other = row + step
        if 0 <= row < len(self._edits) and 0 <= other < len(self._edits):
            self._edits[row], self._edits[other] = self._edits[other], self._edits[row]
            self._refill()
            self.list.setCurrentRow(other)

    def delete_selected(self) -> None:
        row = self.list.currentRow()
        if 0 <= row < len(self._edits):
            del self._edits[row]
            self._refill()

    def all_off(self) -> None:
        self._edits = [replace(e, enabled=False) for e in self._edits]
        self._refill()

    def _refill(self) -> None:
        self.list.blockSignals(True)
        self.list.clear()
        for edit in self._edits:
            item = QListWidgetItem(str(edit))
            item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
            item.setCheckState(Qt.Checked if edit.enabled else Qt.Unchecked)
            self.list.addItem(item)
        self.list.blockSignals(False)
        self.sigEditsChanged.emit(self.edits())

    def _on_item_changed(self, item: QListWidgetItem) -> None:
        row = self.list.row(item)
        enabled = item.checkState() == Qt.Checked
        if 0 <= row < len(self._edits) and self._edits[row].enabled != enabled:
            self.set_enabled(row, enabled)

    # -- adding -------------------------------------------------------------------------
    def set_layers(self, layer_types: dict[str, str], param_names: list[str]) -> None:
        self.layer_types = layer_types
        self.param_names = param_names
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
        self.add_text(self.form_text())

    def _on_add_text(self) -> None:
        if self.add_text(self.text.text()):
            self.text.clear()

    def set_layer(self, layer: str | None) -> None:
        """The form (and the presets that act on one layer) follow the layer selected in the app."""
        if layer:
            self.layer.setCurrentText(layer_of(layer))

    def _on_preset(self, name: str) -> None:
        k = 2.0
        layer = self.layer.currentText().strip()
        if "by k" in name:
            k, ok = QInputDialog.getDouble(self, name, f"Scale the gradient of {layer or '(no layer)'} by k:",
                                           2.0, -1e6, 1e6, 4)
            if not ok:
                return
        self.apply_preset(name, k=k)

    def apply_preset(self, name: str, layer: str | None = None, k: float = 2.0) -> None:
        layer = layer or self.layer.currentText().strip()
        make, one_layer = PRESETS[name]
        try:
            new = make(self.layer_types, self.param_names, layer, k)
        except SpecError as exc:
            self.message.setText(f"<span style='color:#b00'>{exc}</span>")
            return
        where = f" on {layer}" if one_layer else ""
        self.message.setText(f"{name}{where}: {len(new)} edit(s)")
        self._edits.extend(new)
        self._refill()

    def toggle_channel(self, layer: str, channel: int) -> None:
        """Channel ablation: add or remove `channel` in this layer's zero_channels output edit."""
        self._toggle(Key(layer, "output"), "zero_channels", "channels", channel)

    def toggle_head(self, layer: str, head: int) -> None:
        """Head ablation: add or remove `head` in this attention module's zero_heads edit."""
        self._toggle(Key(layer, "attention"), "zero_heads", "heads", head)

    def _toggle(self, key: Key, op: str, name: str, item: int) -> None:
        for row, edit in enumerate(self._edits):
            if edit.key == key and edit.op == op:
                items = list(dict(edit.args)[name])
                items.remove(item) if item in items else items.append(item)
                if items:
                    self._edits[row] = replace(edit, args=((name, sorted(items)),))
                else:
                    del self._edits[row]
                self._refill()
                return
        self.add(Edit(key, op, ((name, [item]),)))
