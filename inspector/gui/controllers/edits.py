"""Wires the edits panel, the comparison view and session files into the main window."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QFileDialog, QMenu

from inspector.core.edits import Edit
from inspector.core.errors import InspectorError
from inspector.core.keys import Key
from inspector.core.records.requests import ModelRequest

from ..docks.edits_panel import EditsPanel
from ..views.compare_view import CompareView
from .against import AgainstController

SESSION_FILTER = "Inspector sessions (*.inspector.json)"


class EditsController(QObject):
    """The edits panel and the Compare tab, wired to the state; session files."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.state = state = window.state
        self.panel = EditsPanel()
        self.compare = CompareView()
        window.tabs.addTab(self.compare, "Compare")
        self.against = AgainstController(window, self.compare)
        self.dock = window._dock("Edits", self.panel, Qt.RightDockWidgetArea, scroll=True)
        self.panel.sigEditsChanged.connect(state.set_edits)
        self.compare.sigLayerChosen.connect(state.select_layer)
        state.sigEditsSet.connect(self._on_edits_set)
        window.activation_panel.sigChannelClicked.connect(self._on_channel_clicked)
        window.gradient_panel.sigChannelClicked.connect(self._on_head_clicked)
        state.sigModelLoaded.connect(self._on_loaded)
        state.sigLayerSelected.connect(self._on_layer_selected)
        window.sigResultShown.connect(lambda _o: self.refresh())
        state.sigGradSiteShown.connect(lambda _s: self.refresh())
        window.tabs.currentChanged.connect(self._on_tab_changed)

    # -- what the state says ----------------------------------------------------------------
    def _on_edits_set(self, edits) -> None:
        self.panel.blockSignals(True)
        self.panel.set_edits(edits)
        self.panel.blockSignals(False)

    def _on_loaded(self, info, _ticks) -> None:
        self.panel.set_layers(info.layer_types, info.parameter_names)
        self.panel.set_layer(self.state.layer)

    def _on_layer_selected(self, layer) -> None:
        self.panel.set_layer(layer)
        self.refresh()

    def _on_channel_clicked(self, channel: int) -> None:
        if not self.panel.ablate.isChecked():
            return
        layer = self.state.layer
        if layer:
            self.panel.toggle_channel(layer.split("#")[0], channel)

    def _on_head_clicked(self, head: int) -> None:
        """With ablation on, clicking a head's attention map removes (or restores) that head."""
        if not self.panel.ablate.isChecked() or not self.window.gradient_panel.key.endswith(":attention"):
            return
        layer = self.state.layer
        if layer:
            self.panel.toggle_head(layer.split("#")[0], head)

    def _on_tab_changed(self, _index: int) -> None:
        self.state.set_compare_shown(self.window.tabs.currentWidget() is self.compare)
        self.refresh()

    def refresh(self) -> None:
        """Redraw the comparison, only while it is the tab being looked at."""
        outcome = self.state.outcome
        if outcome is None or self.window.tabs.currentWidget() is not self.compare:
            return
        name = self.state.layer
        self.compare.set_layers(self.window.layer_names(), name)
        if not name:
            self.compare.clear()
            if outcome.against is not None:
                self.compare.divergence.show_diff(outcome.against)  # the model's output still compares
            return
        act_key, grad_key = self.state.panel_keys(name)
        if outcome.against is not None:
            self.compare.show_models(outcome.against, act_key, grad_key)
        else:
            self.compare.show(outcome.baseline, outcome.result, act_key, grad_key)

    def extend_tree_menu(self, menu: QMenu, path: str) -> None:
        sub = menu.addMenu(f"Add edit on {path}")
        for label, edit in (
            ("Clamp grad_output ≥ 0", Edit(Key(path, "grad_output"), "clamp", (("min", 0),))),
            ("Scale grad_output × 2", Edit(Key(path, "grad_output"), "scale", (("k", 2.0),))),
            ("Guided: grad_input ≥ 0", Edit(Key(path, "grad_input"), "guided")),
            ("Zero output", Edit(Key(path, "output"), "zero")),
        ):
            sub.addAction(label, lambda e=edit: self.panel.add(e))
        sub.addAction("In the edits panel…", lambda: self._edit_in_panel(path))

    def _edit_in_panel(self, path: str) -> None:
        self.panel.set_layer(path)
        self.dock.show()
        self.dock.raise_()

    # -- sessions -------------------------------------------------------------------------
    def session(self):
        """The session file's record of what is loaded and chosen now."""
        from inspector.core.session.file import Session

        s = self.state
        model = s.model.request if s.model else ModelRequest()
        return Session(
            model=model.source, weights=model.weights, input=s.input, device=s.device, target=s.target,
            layers=tuple(s.ticked()), sites=tuple(sorted(s.sites())), edits=s.edits,
            input_grad=s.edits_active(), seed=s.model.seed if s.model else None,
        )

    def save_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self.window, "Save session", "session.inspector.json", SESSION_FILTER)
        if path:
            self.save(path)

    def save(self, path: str) -> None:
        from inspector.core.session.file import save_session

        try:
            written = save_session(self.session(), path)
        except (InspectorError, OSError) as exc:
            self.state.notify("error", f"Could not save the session to {path}: {exc}")
            return
        self.state.notify("info", f"Saved the session to {written}.")

    def load_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Load session", "", SESSION_FILTER)
        if path:
            self.load(path)

    def load(self, path: str, trust: bool | None = None) -> bool:
        from inspector.core.session.file import load_session
        from inspector.core.sources.trust import carries_code

        try:
            session = load_session(path, trust=True)
        except InspectorError as exc:
            self.state.notify("error", f"Could not load the session {path}: {exc}")
            return False
        if carries_code(session.model):
            if trust is None:
                trust = self.state.ask_trust(Path(path).name, f"loads the model from {session.model}, which runs code")
            if not trust:
                self.state.notify("info", f"Session not loaded: {Path(path).name}. Nothing was run.")
                return False
        self.apply(session, trust=bool(trust))
        return True

    def apply(self, session, trust: bool = False) -> None:
        s = self.state
        s.set_device(session.device)
        s.set_input(session.input)
        s._next_target = session.target
        s.select_grad_site(next((site for site in ("grad_input", "params") if site in session.sites), "grad_output")
                           .replace("params", "weight:grad"))
        s.edits = tuple(session.edits)
        s.sigEditsSet.emit(s.edits)
        s.request_model(ModelRequest(session.model, session.weights, trust, session.seed), ticks=set(session.layers))

