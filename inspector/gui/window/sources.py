"""How the user picks a model, its weights and an input: choosers, file dialogs, drag and drop, paste.

Each choice goes to the state; sources that run code go through the trust prompt first.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QInputDialog

from inspector.core.common.errors import WriteError
from inspector.core.records.requests import ModelRequest
from inspector.core.sources.refs import HF_PREFIX
from inspector.core.storage.writes import write_bytes
from inspector.gui.common import file_dialogs

from ..figures.encoded import encoded

MODEL_FILES = "Models (*.py *.pt *.pth *.pt2 *.ts *.jit *.torchscript)"
VIDEO_FILES = "Videos (*.mp4 *.m4v *.mkv *.avi *.mov *.webm *.mpg *.mpeg *.wmv *.ogv *.flv)"


class SourcesMixin:
    """Part of MainWindow: choosing the model source, weights and input."""

    @property
    def engine_files(self):
        """The remote engine whose server the file dialogs browse for what the engine reads (its RemoteWorker);
        None when the engine runs in this process (the native dialogs)."""
        return self.state.worker if self.state.engine_url else None

    def _not_on_the_engine(self, what: str) -> bool:
        """On a remote engine, which reads its server's files: `what`, a file of this machine, is said in one line
        instead of becoming the input or the model (True)."""
        if self.state.engine_url is None:
            return False
        self.state.notify("error", f"{what} on this machine, and the engine reads its server's files: choose one "
                                   f"there with File > Open input… (or Open model…). Still showing "
                                   f"{self.state.input or 'nothing'}.")
        return True

    def paste_image(self) -> None:
        image = QGuiApplication.clipboard().image()
        if image.isNull():
            self.state.notify("info", "The clipboard holds no image.")
            return
        if self._not_on_the_engine("A pasted image stays"):
            return
        path = Path(tempfile.gettempdir()) / f"inspector-paste-{time.time_ns()}.png"
        try:
            write_bytes(path, encoded(image, "PNG"))
        except WriteError as exc:
            self.state.notify("error", f"The pasted image could not be kept: {exc}")
            return
        self.state.set_input(str(path))

    def _on_model_chosen(self, source: str) -> None:
        from inspector.core.sources.trust import carries_code

        current = self.state.model.request if self.state.model else None
        if current is not None and source == current.source:
            return
        if carries_code(source):
            why = ("brings its own code or pickled weights" if source.lower().startswith(HF_PREFIX)
                   else "runs code to build the model")
            self.state.open_trusted(ModelRequest(source), source, why)
        else:
            self.state.request_model(ModelRequest(source))

    def _on_weights_chosen(self, kind: str, seed) -> None:
        info = self.state.model
        if info is None or kind == "keep":
            return
        request = info.request
        if kind == "checkpoint":
            path = file_dialogs.open_file(self, "weights", f"Weights for {info.source}",
                                          "Weights (*.safetensors *.pt *.pth *.bin)", engine=True)
            if not path:
                self.weights_combo.show_loaded(info)
                return
            self.state.request_model(ModelRequest(request.source, path, request.trust))
            return
        if kind == "seed":
            seed, ok = QInputDialog.getInt(self, f"Random weights for {info.source}", "Seed:",
                                           info.seed or 0, 0, 2**31 - 1)
            if not ok:
                self.weights_combo.show_loaded(info)
                return
            kind = "random"
        if kind == "random" and seed is None:
            from inspector.core.sources.seeds import new_seed

            seed = new_seed()  # picked here: the same request twice must still mean new weights
        self.state.request_model(ModelRequest(request.source, kind, request.trust, seed=seed))

    def on_open_model(self) -> None:
        path = file_dialogs.open_file(self, "model", "Open model", MODEL_FILES, engine=True)
        if path:
            self.open_model_file(path)

    def on_open_hf_folder(self) -> None:
        """A folder written by transformers' save_pretrained (config.json, weights, image-processor config)."""
        path = file_dialogs.choose_folder(self, "model", "Open Hugging Face model folder (save_pretrained)",
                                          engine=True)
        if path:
            self.open_hf_folder(path)

    def open_hf_folder(self, path: str) -> None:
        if self.engine_files is None and not (Path(path) / "config.json").is_file():  # (a server says it)
            self.state.notify("error", f"{path} has no config.json: choose a folder written by save_pretrained.")
            return
        self._on_model_chosen(f"hf:{path}")

    def open_model_file(self, path: str, name: str | None = None) -> None:
        if path.endswith(".py"):
            if name is None:
                from inspector.core.sources.python_names import names_in

                found = names_in(path)  # read, not run: the file runs only after the trust question
                label = ("Class or factory (the file's classes and functions; or type another name):" if found
                         else "Class or factory name:")
                name, ok = QInputDialog.getItem(self, f"Model in {Path(path).name}", label, found, 0, True)
                name = name.strip()
                if not ok or not name:
                    return
            self.state.open_trusted(ModelRequest(f"{path}:{name}"), Path(path).name, "runs this Python file")
        else:
            self.state.open_trusted(ModelRequest(path), Path(path).name, "can run code stored in the file")

    def on_open_input(self) -> None:
        path = file_dialogs.open_file(self, "input", "Open input", file_dialogs.INPUT_FILES, engine=True)
        if path:
            self.state.set_input(path)

    def on_open_folder(self) -> None:
        path = file_dialogs.choose_folder(self, "input", "Open a folder of images", engine=True)
        if path:
            self.state.folder.open(path)

    def on_open_video(self) -> None:
        path = file_dialogs.open_file(self, "input", "Open a video file", VIDEO_FILES)
        if path:
            self.state.live.open(path)

    def on_open_camera(self) -> None:
        import sys

        label = ("DirectShow device name (as Windows lists it):" if sys.platform.startswith("win")
                 else "Camera number (0 is the first):")
        name, ok = QInputDialog.getText(self, "Open camera", label, text="" if sys.platform.startswith("win") else "0")
        if ok and name.strip():
            self.state.live.open(f"camera:{name.strip()}")

    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        from inspector.core.inputs.video import is_video
        from inspector.core.sources.refs import MODEL_FILE_SUFFIXES

        urls = event.mimeData().urls()
        if urls and urls[0].isLocalFile():
            path = urls[0].toLocalFile()
            if not is_video(path) and self._not_on_the_engine(f"{path} is"):  # (a video is decoded here)
                return
            if (Path(path) / "config.json").is_file():  # a save_pretrained folder
                self.open_hf_folder(path)
                return
            if path.lower().endswith(".py") or path.lower().endswith(MODEL_FILE_SUFFIXES):
                self.open_model_file(path)
            else:
                self.state.set_input(path)
