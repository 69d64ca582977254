"""The Layer tab's side of the main window (`LayerPanelsMixin`): the module tree's current row and menu, the
layer chooser, and the two panels drawing the selected layer's captures from the result on screen (no re-run;
a remote engine's held arrays asked for when a layer is shown)."""

from __future__ import annotations

from ..state.run_choices import attention_to_tick, missing_text


class LayerPanelsMixin:
    """For MainWindow: needs `state`, `loaded`, `layer_model`, `proxy`, `tree_view`, `layer_combo`,
    `activation_panel`, `gradient_panel` and `_outcome_drawn`."""

    # -- the module tree --------------------------------------------------------------------
    def _on_tree_current(self, current, _previous) -> None:
        path = self.layer_model.path_of(self.proxy.mapToSource(current))
        if path is None:
            return
        i = self.layer_combo.findData(path)
        if i >= 0:
            self.layer_combo.setCurrentIndex(i)
        elif path and path not in self.state.ticks and self.state.model is not None:  # selected, not ticked: the
            # box ticks (a click on the name, the arrow keys or a right-click never change what a run captures)
            self.statusBar().showMessage(f"{path} is not ticked: tick its box (or press Space) to capture it and "
                                         f"show it here.", 10_000)

    def _on_tree_menu(self, pos) -> None:
        from .tree_menu import tree_menu

        index = self.proxy.mapToSource(self.tree_view.indexAt(pos))
        menu = tree_menu(self, self.layer_model.path_of(index))
        menu.popup(self.tree_view.viewport().mapToGlobal(pos))

    def step_layer(self, step: int) -> None:
        """Show the next (+1) or previous (-1) captured layer."""
        n = self.layer_combo.count()
        if n:
            self.layer_combo.setCurrentIndex((self.layer_combo.currentIndex() + step) % n)

    # -- panels -------------------------------------------------------------------------------
    def _fill_layer_combo(self) -> None:
        """The captured layers of the result (the state picked which one is shown)."""
        self.layer_combo.blockSignals(True)
        self.layer_combo.clear()
        for name in self.state.layer_names():
            self.layer_combo.addItem(name, name)
        i = self.layer_combo.findData(self.state.layer)
        self.layer_combo.setCurrentIndex(max(i, 0))
        self.layer_combo.blockSignals(False)

    def current_layer(self) -> str | None:
        return self.state.layer

    def _on_layer_selected(self, name) -> None:
        """Any picker (the Layer tab's, the Compare tab's, the tree) chose `name`: show it everywhere."""
        i = self.layer_combo.findData(name)
        if i >= 0 and i != self.layer_combo.currentIndex():
            self.layer_combo.blockSignals(True)
            self.layer_combo.setCurrentIndex(i)
            self.layer_combo.blockSignals(False)
        if self.state.outcome is self._outcome_drawn:  # else a new result chose it: _on_result draws, in turns
            self.show_layer()

    def show_layer(self, name: str | None = None, panels: tuple[int, ...] = (0, 1), details: bool = True) -> None:
        """Draw the selected layer's captures from the last result (no re-run); `panels` picks
        the activation (0) and/or gradient (1) panel; `details=False` leaves their histograms and
        statistics to `TensorPanel.show_details`."""
        if name is not None:
            i = self.layer_combo.findData(name)
            if i >= 0 and i != self.layer_combo.currentIndex():
                self.layer_combo.setCurrentIndex(i)  # re-enters through the state's selection
                return
        outcome = self.state.outcome
        if self.state.view != "layer":
            return  # drawn when the Layer tab is shown
        if outcome is None:
            return
        name = self.state.layer
        if not name:
            self.activation_panel.clear("Tick a module to see its activations.")
            self.gradient_panel.clear()
            return
        captures = outcome.result.captures
        both = zip((self.activation_panel, self.gradient_panel), self.state.panel_keys(name))
        for panel, key in (pair for i, pair in enumerate(both) if i in panels):
            capture = captures.get(key) or captures.get(f"{key}[0]")
            if capture is not None and capture.array is not None:
                panel.show_capture(capture.name, capture.array, capture.stats, details)
            elif capture is not None and self.state.held.fetch(name):  # on a remote engine, sent when shown
                panel.show_missing(f"{capture.name}: asking the engine for its arrays …")
            else:
                first = attention_to_tick(self.loaded, self.state.grad_site) if key.endswith(":attention") else None
                panel.show_missing(missing_text(self.loaded, self.state.grad_site, name, key), None if first is None
                                   else ("Tick and show the first", f"Tick {first} and show it",
                                         lambda: self.state.tick_and_show(first)))
