"""The Compare tab against a second model: picking it (a weights file for the loaded source, or
another source), which side the edits apply to, and the module tree's divergence marks."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QInputDialog

from inspector.core.records.requests import ModelRequest
from inspector.core.sources.refs import weights_shown
from inspector.core.sources.seeds import new_seed
from inspector.gui.common import file_dialogs

WEIGHTS_FILTER = "Weights (*.safetensors *.pt *.pth *.bin *.ckpt);;All files (*)"


def side_name(request: ModelRequest) -> str:
    """`resnet18 (b.safetensors)`, `demo (bundled)`: a model as the picker and the captions show it (its weights
    named by `weights_shown`, as the command line names them; a file by its name)."""
    return f"{request.source} ({Path(weights_shown(request.source, request.weights)).name})"


class AgainstController(QObject):
    def __init__(self, state, compare, layer_model, tree_view) -> None:
        super().__init__(state)
        self.state, self.compare, self.layer_model, self.tree_view = state, compare, layer_model, tree_view
        compare.sigAgainstWanted.connect(self._on_wanted)
        compare.sigEditsOn.connect(state.set_edits_on)
        state.sigAgainstSet.connect(self._on_against_set)
        state.sigResult.connect(self._on_result)

    # -- choosing ---------------------------------------------------------------------------
    def _on_wanted(self, kind: str) -> None:
        if kind == "baseline":
            self.state.set_against(None)
        elif kind == "weights":
            path = file_dialogs.open_file(self.compare, "weights", "Weights of the second model", WEIGHTS_FILTER,
                                          engine=True)
            self.choose_weights(path)
        elif kind == "model":
            source, ok = QInputDialog.getText(self.compare, "Second model", "Model source (demo, resnet18, "
                                              "timm:NAME, file.py:Name), with module paths like the first's:")
            weights, ok2 = (QInputDialog.getText(self.compare, "Second model", "Its weights: random, pretrained or "
                                                 "a file path:", text="random") if ok and source.strip()
                            else ("", False))
            self.choose_model(source if ok and ok2 else "", weights)
        self.compare.set_against(side_name(self.state.against) if self.state.against else None)

    def choose_weights(self, path: str) -> None:
        """Compare with the loaded source under the weights in `path` ("" does nothing)."""
        model = self.state.model
        if path and model is not None:
            self.state.set_against(ModelRequest(model.source, path, model.request.trust))

    def choose_model(self, source: str, weights: str = "random") -> None:
        """Compare with another source; random weights get a seed of their own, never the loaded
        model's (the same source would otherwise be compared with itself)."""
        from inspector.core.sources.trust import carries_code

        source, weights = source.strip(), (weights or "random").strip()
        model = self.state.model
        if not source or model is None:
            return
        trust = False
        if carries_code(source):
            if not self.state.ask_trust(source, "runs code to build the second model"):
                self.state.notify("info", f"Not loaded: {source}. Nothing was run.")
                return
            trust = True
        seed = new_seed() if weights == "random" else None
        self.state.set_against(ModelRequest(source, None if weights == "random" else weights, trust, seed))

    # -- what the state says ----------------------------------------------------------------
    def _on_against_set(self, request) -> None:
        self.compare.set_against(side_name(request) if request is not None else None)
        self.compare.set_edits_on(self.state.edits_on)
        if request is None:
            self.layer_model.set_divergence(None)

    def _on_result(self, outcome) -> None:
        diff = outcome.against
        if diff is None:
            self.layer_model.set_divergence(None)
            return
        first = diff.first_layer()
        self.layer_model.set_divergence(diff.by_layer(), diff.threshold, first)
        if first is not None:
            self.tree_view.resizeColumnToContents(0)  # the first divergent's name is bold: wider
