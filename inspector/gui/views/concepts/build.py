"""The Build concepts dialog: the images folder, the layer (the selected one by default), K, the method (nmf or
sae) and the output folder of `learn_concepts`, as `network-inspector concepts` takes them. NMF is offered only for
a layer it can learn (`concepts_sign`): for a layer known to go negative it is greyed and the method is sae, and the
line under the method says why."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from PySide6.QtWidgets import QComboBox, QLabel, QSpinBox

from ...common.concepts_sign import LayerSign
from ...common.controls import content_free, searchable
from ..folder_job import FolderJobDialog

METHODS = (("nmf", "nmf: non-negative factorisation (a layer after a ReLU)"),
           ("sae", "sae: sparse autoencoder (any layer)"))


class BuildConceptsDialog(FolderJobDialog):
    """`sign_of(layer)`: what the app knows of whether NMF can learn that layer (None: nothing known)."""

    def __init__(self, layers: list[str], layer: str | None, parent=None,
                 sign_of: Callable[[str], LayerSign] | None = None) -> None:
        super().__init__("concepts", "Build concepts", parent, data_also="atlas-data")
        self.sign_of = sign_of
        self.layer = content_free(searchable(QComboBox()), 24)
        self.layer.addItems(layers)
        if layer in layers:
            self.layer.setCurrentText(layer)
        self.k = QSpinBox(minimum=1, maximum=4096, value=16)
        self.k.setToolTip("How many concepts to learn (at most the number of positions over the images)")
        self.method = QComboBox()
        for name, text in METHODS:
            self.method.addItem(text, name)
        self.sparsity = QSpinBox(minimum=1, maximum=4096, value=4)
        self.sparsity.setToolTip("The sparse autoencoder's top-k: how many concepts may be active at each position "
                                 "(from 1 to K)")
        self.method.currentIndexChanged.connect(lambda _i: self.sparsity.setEnabled(self.method.currentData() == "sae"))
        self.sparsity.setEnabled(False)
        self.method_note = QLabel("", wordWrap=True)
        self.method_note.setStyleSheet("color: #555;")
        self.method_note.hide()
        form = self.form
        form.addRow(QLabel("Learns a dictionary of the layer's activations over a folder of images (every position "
                           "of a map, or every token, is a sample); Cancel stops it after a batch, and building "
                           "again with the same choices goes on from there.", wordWrap=True))
        self._folder_rows()
        form.addRow("Layer", self.layer)
        form.addRow("Concepts (K)", self.k)
        form.addRow("Method", self.method)
        form.addRow("", self.method_note)
        form.addRow("Active per position (sae)", self.sparsity)
        self.layer.currentTextChanged.connect(self._offer_methods)
        self._offer_methods(self.layer.currentText(), first=True)
        self._finish(600)

    def sign(self, layer: str) -> LayerSign:
        return self.sign_of(layer) if self.sign_of is not None and layer else LayerSign(None, "")

    def _offer_methods(self, layer: str, first: bool = False) -> None:
        """NMF greyed for a layer it cannot learn; the method the pair works with chosen (on opening: NMF where it
        is known to work, sae otherwise; later the user's choice kept where it works)."""
        if self.sign_of is None:
            return  # nothing known: both offered, NMF first
        layer = layer.strip()
        sign = self.sign(layer) if self.layer.findText(layer) >= 0 else LayerSign(None, "")  # a name half typed
        self.method.model().item(self.method.findData("nmf")).setEnabled(sign.nmf is not False)
        if sign.nmf is False or (first and sign.nmf is None):
            self.method.setCurrentIndex(self.method.findData("sae"))
        self.method_note.setText(sign.why)
        self.method_note.setVisible(bool(sign.why))

    def choices(self) -> tuple[str, str, int, str, int | None, str]:
        """(images folder, layer, K, method, the sae's top-k (None for nmf), output folder)."""
        method = self.method.currentData()
        return (self.data.text().strip(), self.layer.currentText().strip(), self.k.value(), method,
                self.sparsity.value() if method == "sae" else None, self.out.text().strip())

    def problem(self) -> str:
        data, layer, k, method, sparsity, out = self.choices()
        if not data:
            return "Choose the folder of images to learn from."
        if not Path(data).is_dir():
            return f"{data} is not a folder."
        if not layer:
            return "Choose a layer."
        if self.layer.findText(layer) < 0:
            return f"The model has no layer {layer}."
        if method == "nmf" and self.sign(layer).nmf is False:
            return self.sign(layer).why
        if sparsity is not None and sparsity > k:
            return f"At most K ({k}) concepts can be active per position, not {sparsity}."
        if not out:
            return "Choose the folder to write the concepts to."
        return ""
