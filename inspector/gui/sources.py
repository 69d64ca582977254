"""How the user picks a model and an input: combos, file dialogs, drag and drop, paste."""

from __future__ import annotations

import tempfile
from pathlib import Path

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMessageBox

from inspector.core.workbench import ModelRequest

from .controls import WEIGHTS

CODE_SUFFIXES = (".pt", ".pth", ".pt2", ".ts", ".jit", ".torchscript")


class SourcesMixin:
    """Part of MainWindow: choosing the model source, weights and input."""

    def paste_image(self) -> None:
        image = QGuiApplication.clipboard().image()
        if image.isNull():
            self.statusBar().showMessage("The clipboard holds no image.", 5000)
            return
        path = Path(tempfile.gettempdir()) / f"inspector-paste-{next(self._run_ids)}.png"
        image.save(str(path))
        self.set_input(str(path))

    def _on_model_chosen(self, source: str) -> None:
        if source and source != self.model_request.source:
            weights = self.weights_combo.currentText()
            self.load_model(ModelRequest(source, weights if weights in WEIGHTS else None))

    def _on_weights_chosen(self, index: int) -> None:
        text = self.weights_combo.itemText(index)
        if text == "checkpoint…":
            path, _ = QFileDialog.getOpenFileName(self, "Weights", "", "Weights (*.safetensors *.pt *.pth *.bin)")
            if not path:
                return
            text = path
        elif text not in WEIGHTS:
            return  # the weights already loaded ("bundled", a checkpoint path): nothing to change
        self.load_model(ModelRequest(self.model_request.source, text, self.model_request.trust))

    def _on_open_model(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open model", "", "Models (*.py *.pt *.pth *.pt2 *.ts *.jit)")
        if path:
            self.open_model_file(path)

    def open_model_file(self, path: str, name: str | None = None, trusted: bool | None = None) -> None:
        if path.endswith(".py"):
            if name is None:
                name, ok = QInputDialog.getText(self, "Model in file", "Class or factory name:")
                if not ok or not name:
                    return
            if trusted is None and not self._confirm_code(Path(path).name, "runs this Python file"):
                return
            self.load_model(ModelRequest(f"{path}:{name}"))
        else:
            if trusted is None:
                trusted = self._confirm_code(Path(path).name, "can run code stored in the file")
            if trusted:
                self.load_model(ModelRequest(path, None, True))

    def _confirm_code(self, name: str, what: str) -> bool:
        answer = QMessageBox.question(
            self, "Trust this file?", f"Loading {name} {what}. Only continue if you trust where it came from.")
        return answer == QMessageBox.Yes

    def _on_open_input(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Open input", "", "Images and tensors (*.png *.jpg *.jpeg *.bmp *.tif *.tiff *.webp *.gif *.npy *.pt)")
        if path:
            self.set_input(path)

    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        urls = event.mimeData().urls()
        if urls and urls[0].isLocalFile():
            path = urls[0].toLocalFile()
            if path.endswith(".py") or path.endswith(CODE_SUFFIXES):
                self.open_model_file(path)
            else:
                self.set_input(path)

