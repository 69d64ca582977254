"""Wires the edits panel, the comparison view and session files into the main window."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox

from inspector.core.edits import Edit
from inspector.core.errors import InspectorError
from inspector.core.keys import Key
from inspector.core.session_file import Session, load_session, save_session
from inspector.core.workbench import ModelRequest

from .compare_view import CompareView
from .edits_panel import EditsPanel

SESSION_FILTER = "Inspector sessions (*.inspector.json)"


class EditsController(QObject):
    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.panel = EditsPanel()
        self.compare = CompareView()
        window.tabs.addTab(self.compare, "Compare")
        self.dock = window._dock("Edits", self.panel, Qt.RightDockWidgetArea)
        self.panel.sigEditsChanged.connect(self._on_edits_changed)
        window.activation_panel.sigChannelClicked.connect(self._on_channel_clicked)
        window.worker.sigLoaded.connect(self._on_loaded)
        window.sigResultShown.connect(lambda _o: self.refresh())
        window.layer_combo.currentIndexChanged.connect(lambda _i: self.refresh())
        window.grad_site_combo.currentIndexChanged.connect(lambda _i: self.refresh())
        window.tabs.currentChanged.connect(self._on_tab_changed)
        menu = window.menuBar().actions()[0].menu()
        menu.addSeparator()
        menu.addAction("Save session…", self.save_dialog)
        menu.addAction("Load session…", self.load_dialog)

    # -- what the window asks -------------------------------------------------------------
    def edits(self) -> tuple[Edit, ...]:
        return self.panel.edits()

    def active(self) -> bool:
        return any(e.enabled for e in self.panel.edits())

    def _on_edits_changed(self, _edits) -> None:
        self.window.schedule_run(force=True)

    def _on_loaded(self, loaded, tree) -> None:
        types = {l.path: l.type_name for l in tree.layers if l.path}
        params = [name for name, _ in loaded.module.named_parameters()]
        self.panel.set_layers(types, params)

    def _on_channel_clicked(self, channel: int) -> None:
        if not self.panel.ablate.isChecked():
            return
        layer = self.window.current_layer()
        if layer:
            self.panel.toggle_channel(layer.split("#")[0], channel)

    def _on_tab_changed(self, _index: int) -> None:
        outcome = self.window.outcome
        shown = self.window.tabs.currentWidget() is self.compare
        if shown and outcome is not None and self.active() and outcome.result.input_grad is None:
            self.window.schedule_run(force=True)  # the comparison shows the input gradient too
        self.refresh()

    def refresh(self) -> None:
        """Redraw the comparison, only while it is the tab being looked at."""
        outcome = self.window.outcome
        if outcome is None or self.window.tabs.currentWidget() is not self.compare:
            return
        name = self.window.current_layer()
        if not name:
            self.compare.clear()
            return
        act_key, grad_key = self.window.panel_keys(name)
        self.compare.show(outcome.baseline, outcome.result, act_key, grad_key)

    def extend_tree_menu(self, menu: QMenu, path: str) -> None:
        sub = menu.addMenu("Add edit")
        for label, edit in (
            ("Clamp grad_output ≥ 0", Edit(Key(path, "grad_output"), "clamp", (("min", 0),))),
            ("Scale grad_output × 2", Edit(Key(path, "grad_output"), "scale", (("k", 2.0),))),
            ("Guided: grad_input ≥ 0", Edit(Key(path, "grad_input"), "guided")),
            ("Zero output", Edit(Key(path, "output"), "zero")),
        ):
            sub.addAction(label, lambda e=edit: self.panel.add(e))
        sub.addAction("In the edits panel…", lambda: self._edit_in_panel(path))

    def _edit_in_panel(self, path: str) -> None:
        self.panel.layer.setCurrentText(path)
        self.dock.raise_()

    # -- sessions -------------------------------------------------------------------------
    def session(self) -> Session:
        w = self.window
        return Session(
            model=w.model_request.source, weights=w.model_request.weights, input=w.input_source,
            device=w.device_combo.device(), target=w.target_combo.target(),
            layers=tuple(w.layer_model.ticked()), sites=tuple(sorted(w.sites())), edits=self.edits(),
            input_grad=self.active(),
        )

    def save_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self.window, "Save session", "session.inspector.json", SESSION_FILTER)
        if path:
            save_session(self.session(), path)
            self.window.statusBar().showMessage(f"Saved {path}", 5000)

    def load_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Load session", "", SESSION_FILTER)
        if path:
            self.load(path)

    def load(self, path: str, trust: bool | None = None) -> bool:
        try:
            session = load_session(path, trust=True)
        except InspectorError as exc:
            self.window._show_error(str(exc))
            return False
        if session.points_at_code():
            if trust is None:
                answer = QMessageBox.question(
                    self.window, "Trust this session?",
                    f"{Path(path).name} loads the model from {session.model}, which runs code. "
                    f"Only continue if you trust it.")
                trust = answer == QMessageBox.Yes
            if not trust:
                return False
        self.apply(session, trust=bool(trust))
        return True

    def apply(self, session: Session, trust: bool = False) -> None:
        w = self.window
        w.device_combo.set_device(session.device)
        w.input_source = session.input
        if w.input_combo.findText(session.input) < 0:
            w.input_combo.addItem(session.input)
        w.input_combo.setCurrentIndex(w.input_combo.findText(session.input))
        w.pending_target = session.target
        w.set_gradient_site_from(session.sites)
        self.panel.blockSignals(True)
        self.panel.set_edits(session.edits)
        self.panel.blockSignals(False)
        w._restoring_ticks = set(session.layers)
        w.load_model(ModelRequest(session.model, session.weights, trust), force=True)
