"""Wires the edits panel and the Compare tab to the state; session files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QMenu

from inspector.core.edits import Edit
from inspector.core.common.errors import InspectorError
from inspector.core.common.keys import Key, layer_of
from inspector.gui.common import file_dialogs

from ..state.sessions import apply_session, session_of

SESSION_FILTER = "Inspector sessions (*.inspector.json)"


class EditsController(QObject):
    """The edits panel and the Compare tab, wired to the state; session files."""

    def __init__(self, state, panel, compare, dock, panels) -> None:
        super().__init__(state)
        self.state, self.panel, self.compare, self.dock = state, panel, compare, dock
        self.activation, self.gradient = panels
        editing = state.editing
        panel.sigAddText.connect(self._on_add_text)
        panel.sigEnabled.connect(editing.set_enabled)
        panel.sigMove.connect(lambda row, step: panel.select_row(editing.move(row, step)))
        panel.sigDelete.connect(editing.delete)
        panel.sigAllOff.connect(editing.all_off)
        panel.sigDeleteAll.connect(editing.delete_all)
        panel.sigUndo.connect(editing.undo)
        editing.sigUndoable.connect(panel.set_undoable)
        panel.sigPreset.connect(editing.apply_preset)
        editing.sigMessage.connect(panel.show_message)
        self.compare.sigLayerChosen.connect(state.select_layer)
        state.sigEditsSet.connect(self._on_edits_set)
        self.activation.sigChannelClicked.connect(self._on_channel_clicked)
        self.gradient.sigChannelClicked.connect(self._on_head_clicked)
        state.sigModelLoaded.connect(self._on_loaded)
        self._ablating = None  # the model source Ablate was turned on for
        panel.ablate.toggled.connect(self._on_ablate_toggled)
        state.sigLayerSelected.connect(self._on_layer_selected)
        state.sigGradSiteShown.connect(lambda _s: self.refresh())
        state.sigViewShown.connect(lambda _v: self.refresh())
        state.held.sigArrived.connect(lambda _outcome: self.refresh())  # a remote engine's arrays of the layer shown

    # -- what the state says ----------------------------------------------------------------
    def _on_edits_set(self, edits) -> None:
        self.panel.set_edits(edits)

    def _on_add_text(self, text: str, typed: bool) -> None:
        if self.state.editing.add_text(text) and typed:
            self.panel.text.clear()

    def _on_loaded(self, info, _ticks) -> None:
        self.panel.set_layers(info.layer_types)
        self.panel.set_layer(self.state.layer)
        if self.panel.ablate.isChecked() and info.request.source != self._ablating:  # never a leftover mode
            was = self._ablating
            self.panel.ablate.setChecked(False)
            self.state.notify("info", f"Ablate is off: it was on for {was}. Tick it again to ablate channels or "
                                      f"heads of this model.")

    def _on_ablate_toggled(self, on: bool) -> None:
        """Ablate belongs to the model it was turned on for; while on, the panels say what a click does."""
        info = self.state.model
        self._ablating = info.request.source if on and info is not None else None
        self.activation.set_click_mode("Ablate is on: a click on a channel zeroes it (again: restores it)"
                                       if on else None)

    def _on_layer_selected(self, layer) -> None:
        self.panel.set_layer(layer)
        self.refresh()

    def _on_channel_clicked(self, channel: int) -> None:
        if not self.panel.ablate.isChecked():
            return
        layer = self.state.layer
        if layer:
            self.state.editing.toggle_channel(layer_of(layer), channel)

    def _on_head_clicked(self, head: int) -> None:
        """With ablation on, clicking a head's attention map removes (or restores) that head."""
        if not self.panel.ablate.isChecked() or not self.gradient.key.endswith(":attention"):
            return
        layer = self.state.layer
        if layer:
            self.state.editing.toggle_head(layer_of(layer), head)

    def refresh(self, done: Callable[[], None] | None = None) -> None:
        """Redraw the comparison, only while it is the view on screen. A new result: the main window calls
        this in the turn after the input and predictions are drawn, with `done`: a row a turn, then done()."""
        outcome = self.state.outcome
        if outcome is None or self.state.view != "compare":
            if done is not None:
                done()
            return
        name = self.state.layer
        self.compare.set_layers(self.state.layer_names(), name)
        if not name:
            self.compare.clear()
            if outcome.against is not None:
                self.compare.divergence.show_diff(outcome.against)  # the model's output still compares
            if done is not None:
                done()
            return
        act_key, grad_key = self.state.panel_keys(name)
        self.state.held.fetch(name)  # on a remote engine: the layer's arrays it held come (held.sigArrived), then drawn
        if outcome.against is not None:
            self.compare.show_models(outcome.against, act_key, grad_key, done)
        else:
            self.compare.show(outcome.baseline, outcome.result, act_key, grad_key, done)

    def extend_tree_menu(self, menu: QMenu, path: str) -> None:
        sub = menu.addMenu(f"Add edit on {path}")
        for label, edit in (
            ("Clamp grad_output ≥ 0", Edit(Key(path, "grad_output"), "clamp", (("min", 0),))),
            ("Scale grad_output × 2", Edit(Key(path, "grad_output"), "scale", (("k", 2.0),))),
            ("Guided: grad_input ≥ 0", Edit(Key(path, "grad_input"), "guided")),
            ("Zero output", Edit(Key(path, "output"), "zero")),
        ):
            sub.addAction(label, lambda e=edit: self.state.editing.add(e))
        sub.addAction("In the edits panel…", lambda: self._edit_in_panel(path))

    def _edit_in_panel(self, path: str) -> None:
        self.panel.set_layer(path)
        self.dock.show()
        self.dock.raise_()

    # -- sessions -------------------------------------------------------------------------
    def save_dialog(self) -> None:
        path = file_dialogs.save_file(self.panel, "session", "Save session", "session.inspector.json", SESSION_FILTER)
        if path:
            self.save(path)

    def save(self, path: str) -> None:
        from inspector.core.session.file import save_session

        try:
            written = save_session(session_of(self.state, path), path)
        except (InspectorError, OSError) as exc:
            self.state.notify("error", f"Could not save the session to {path}: {exc}")
            return
        self.state.notify("info", f"Saved the session to {written}.")

    def load_dialog(self) -> None:
        path = file_dialogs.open_file(self.panel, "session", "Load session", SESSION_FILTER)
        if path:
            self.load(path)

    def load(self, path: str, trust: bool | None = None) -> bool:
        from inspector.core.session.file import load_session
        from inspector.core.session.stored import attribution_of, check_fits
        from inspector.core.sources.trust import carries_code

        try:  # everything checked before anything changes: a damaged file leaves the app as it was
            session = load_session(path, trust=True)
            stored = (session.attribution or {}).get("stored")
            info = self.state.model
            if stored is not None and info is not None and info.request.source == session.model:
                check_fits(attribution_of(stored, Path(path).name), info.input_shape)  # the model on screen
        except (InspectorError, OSError) as exc:
            self.state.notify("error", f"Could not load the session {path}: {exc}")
            return False
        if carries_code(session.model):
            if trust is None:
                trust = self.state.ask_trust(Path(path).name, f"loads the model from {session.model}, which runs code")
            if not trust:
                self.state.notify("info", f"Session not loaded: {Path(path).name}. Nothing was run.")
                return False
        apply_session(self.state, session, trust=bool(trust), path=path)
        return True

