"""Wires attribution, gradient flow, statistics, non-finite detection and export into the window."""

from __future__ import annotations

import itertools
from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog

from inspector.core.records.manifest import run_manifest
from inspector.core.records.requests import AttributionRequest

from ..views.attribution_view import AttributionView
from ..views.diagnostics_views import GradientFlowView, StatsTable


class AnalysisController(QObject):
    """Attribution, gradient flow, statistics, the first NaN/Inf and exports, wired to the state."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.state = state = window.state
        self.attribution = AttributionView()
        self.flow = GradientFlowView()
        self.stats = StatsTable()
        window.tabs.addTab(self.attribution, "Attribution")
        window.tabs.addTab(self.flow, "Gradient flow")
        window.tabs.addTab(self.stats, "Statistics")
        self._ids = itertools.count(-1, -1)  # attribution requests use negative ids
        self.pending_id = 0
        self.nonfinite: tuple[str, str] | None = None
        self.attribution.sigRequested.connect(self.request_attribution)
        state.worker.sigAttribution.connect(self._on_attribution)
        state.sigFailed.connect(self._on_failed)
        state.sigModelLoaded.connect(self._on_loaded)
        window.sigResultShown.connect(self._on_result)
        state.sigStatsUpdated.connect(self._on_stats_updated)
        window.tabs.currentChanged.connect(lambda _i: self._on_tab_changed())
        self._stats_of = None  # the outcome the statistics table shows
        self._analysed = None  # the outcome whose diagnostics are shown
        self._unshown = None  # a live frame's outcome whose gradient flow waits for its tab

    def _on_loaded(self, info, _ticks) -> None:
        self.attribution.set_choices(info.tree.convolutions(), [])

    def _on_tab_changed(self) -> None:
        self._fill_stats_if_shown()
        if self._unshown is not None and self._unshown is self.state.outcome:
            self._on_result(self._unshown)

    def _on_result(self, outcome) -> None:
        if outcome is self._analysed:
            return  # its update came before it was drawn: already shown
        self._unshown = None
        if self.state.live is not None and self.window.tabs.currentWidget() is not self.flow:
            self._unshown = outcome  # frames come many a second: the hidden tab is drawn when it is shown
            return
        info = self.state.model
        if info is not None:
            self.attribution.set_choices(info.tree.convolutions(), outcome.result.predictions)
        if outcome.analyse and not outcome.complete:
            self.stats.show_pending("Working out the statistics of every capture…")
        self._fill_stats_if_shown()
        if outcome.analysis is None and outcome.analyse:
            self.flow.show_pending("Working out the gradient flow…")
            return  # it comes with the state's sigStatsUpdated
        self._show_analysis(outcome)

    def _on_stats_updated(self, outcome) -> None:
        """The statistics, then the diagnostics, of the result on screen have arrived."""
        self._fill_stats_if_shown()
        if outcome.analysis is not None or not outcome.analyse:
            self._show_analysis(outcome)

    def _show_analysis(self, outcome) -> None:
        """Gradient flow, the statistics table and the first NaN/Inf, from what the worker worked out."""
        self._analysed = outcome
        analysis = outcome.analysis
        if analysis is not None:
            self.flow.show_result(outcome.result, analysis.flow, analysis.dead)
        else:
            self.flow.show_result(outcome.result)  # diagnostics were not asked for: a small result
        if analysis is not None:
            self.nonfinite = analysis.nonfinite
        else:
            from inspector.core.diagnostics import first_nonfinite

            self.nonfinite = first_nonfinite(outcome.result)
        model = self.window.layer_model
        if self.nonfinite and self.nonfinite[0] == "input":
            model.set_highlight(None)  # the model's input is no module: nothing to mark in the tree
            self.state.notify("warning", "The model's input holds NaN/Inf, so every number computed from it may "
                                         "be NaN/Inf too; check the input file.")
        elif self.nonfinite:
            key, direction = self.nonfinite
            layer = key.split(":")[0]
            model.set_highlight(layer if layer in model.paths() else None)
            self.state.notify("warning", f"The first NaN/Inf ({direction}) is at {key}; it is marked red in "
                                         f"the module tree.", ("Show it", lambda: self.window.show_layer(layer)))
        else:
            model.set_highlight(None)

    def _fill_stats_if_shown(self) -> None:
        """The statistics table (one row per capture) is filled only when it is looked at, and only
        once the worker has sent every capture's statistics."""
        outcome = self.state.outcome
        if outcome is None or outcome is self._stats_of or self.window.tabs.currentWidget() is not self.stats:
            return
        if outcome.analyse and not outcome.complete:
            return  # the table says it is waiting; the update fills it
        self.stats.show_result(outcome.result)
        self._stats_of = outcome

    def request_attribution(self, method: str, target: str, layer) -> None:
        s = self.state
        if s.model is None or not s.input:
            self.attribution.show_error("Load a model and an input first.")
            return
        self.pending_id = next(self._ids)
        request = AttributionRequest(s.model.request, s.input, s.device, method, target or s.target, layer,
                                     self.pending_id)
        s.worker.request_attribution(request)

    def _on_attribution(self, request_id: int, found) -> None:
        from inspector.core.export import picture

        if request_id != self.pending_id:
            return
        outcome, info = self.state.outcome, self.state.model
        result = outcome.result if outcome else None
        pic = None
        if result is not None and result.input is not None:
            pic = picture(result.input, info.preprocess if info else None)
        self.attribution.show_attribution(pic, found, list(info.labels) if info and info.labels else None)

    def _on_failed(self, failure) -> None:
        if failure.what == "attribution" and failure.run_id == self.pending_id:
            self.attribution.show_error(failure.message)

    def manifest(self) -> dict:
        s = self.state
        info = s.model
        if info is None:
            return run_manifest(input=s.input, device=s.device, layers=s.ticked())
        return run_manifest(info.source, info.weights, info.seed, s.input, device=s.device, layers=s.ticked())

    def export_dialog(self) -> None:
        if self.state.outcome is None:
            self.state.notify("info", "Nothing to export yet: run first.")
            return
        path, _ = QFileDialog.getSaveFileName(self.window, "Export captures", "captures.npz", "NumPy (*.npz)")
        if path:
            self.export(path)

    def export(self, path: str) -> None:
        from inspector.core.export import export_npz

        try:
            npz, manifest = export_npz(self.state.outcome.result, path, self.manifest())
        except (OSError, ValueError) as exc:
            self.state.notify("error", f"Could not export to {path}: {exc}")
            return
        self.state.notify("info", f"Exported the captures to {npz} and the manifest to {manifest}.")

    def save_png_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self.window, "Save view", "view.png", "PNG (*.png)")
        if path:
            self.save_png(path)

    def save_png(self, path: str) -> Path | None:
        widget = self.window.tabs.currentWidget()
        if not widget.grab().save(str(path)):
            self.state.notify("error", f"Could not write {path}: check the folder exists and the name ends in .png.")
            return None
        self.state.notify("info", f"Saved the {self.window.tabs.tabText(self.window.tabs.currentIndex())} view "
                                  f"to {Path(path).resolve()}.")
        return Path(path)
