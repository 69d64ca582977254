"""Wires attribution, gradient flow, statistics, non-finite detection and export into the window."""

from __future__ import annotations

import itertools
from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog

from inspector.core.diagnostics import first_nonfinite
from inspector.core.export import export_npz, picture
from inspector.core.workbench import AttributionRequest

from .attribution_view import AttributionView
from .diagnostics_views import GradientFlowView, StatsTable


class AnalysisController(QObject):
    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
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
        window.worker.sigAttribution.connect(self._on_attribution)
        window.worker.sigFailed.connect(self._on_failed)
        window.worker.sigLoaded.connect(self._on_loaded)
        window.sigResultShown.connect(self._on_result)
        window.tabs.currentChanged.connect(lambda _i: self._fill_stats_if_shown())
        self._stats_stale = False
        menu = window.menuBar().actions()[0].menu()
        menu.addSeparator()
        menu.addAction("Export captures (.npz + manifest)…", self.export_dialog)
        menu.addAction("Save current view as PNG…", self.save_png_dialog)

    def _on_loaded(self, _loaded, tree) -> None:
        convs = [l.path for l in tree.layers if l.is_leaf and l.type_name.startswith("Conv") and l.calls]
        self.attribution.set_choices(convs, [])

    def _on_result(self, outcome) -> None:
        result = outcome.result
        analysis = outcome.analysis
        if analysis is not None:
            self.flow.show_result(result, analysis.flow, analysis.dead)
        else:
            self.flow.show_result(result)
        self._stats_stale = True
        self._fill_stats_if_shown()
        tree = self.window.tree
        if tree is not None:
            convs = [l.path for l in tree.layers if l.is_leaf and l.type_name.startswith("Conv") and l.calls]
            self.attribution.set_choices(convs, result.predictions)
        self.nonfinite = analysis.nonfinite if analysis is not None else first_nonfinite(result)
        model = self.window.layer_model
        if self.nonfinite:
            key, direction = self.nonfinite
            layer = key.split(":")[0]
            model.set_highlight(layer if layer in model.paths() else None)
            self.window.statusBar().showMessage(f"First NaN/Inf ({direction}): {key}", 0)
        else:
            model.set_highlight(None)

    def _fill_stats_if_shown(self) -> None:
        """The statistics table (one row per capture) is filled only when it is looked at."""
        outcome = self.window.outcome
        if self._stats_stale and outcome is not None and self.window.tabs.currentWidget() is self.stats:
            self.stats.show_result(outcome.result)
            self._stats_stale = False

    def request_attribution(self, method: str, target: str, layer) -> None:
        w = self.window
        if w.tree is None or not w.input_source:
            self.attribution.show_error("Load a model and an input first.")
            return
        self.pending_id = next(self._ids)
        request = AttributionRequest(w.model_request, w.input_source, w.device_combo.device(), method,
                                     target or w.target_combo.target(), layer, self.pending_id)
        w.worker.request_attribution(request)

    def _on_attribution(self, request_id: int, found) -> None:
        if request_id != self.pending_id:
            return
        result = self.window.outcome.result if self.window.outcome else None
        loaded = self.window.loaded
        pic = None
        if result is not None and result.input is not None:
            pic = picture(result.input, loaded.preprocess if loaded else None)
        self.attribution.show_attribution(pic, found, loaded.labels if loaded else None)

    def _on_failed(self, request_id: int, message: str, _cancelled: bool) -> None:
        if request_id and request_id == self.pending_id:
            self.attribution.show_error(message)

    def manifest(self) -> dict:
        w = self.window
        return {"model": w.model_request.source, "weights": w.loaded.weights if w.loaded else None,
                "input": w.input_source, "device": w.device_combo.device(),
                "layers": w.layer_model.ticked()}

    def export_dialog(self) -> None:
        if self.window.outcome is None:
            self.window.statusBar().showMessage("Nothing to export yet: run first.", 5000)
            return
        path, _ = QFileDialog.getSaveFileName(self.window, "Export captures", "captures.npz", "NumPy (*.npz)")
        if path:
            npz, manifest = export_npz(self.window.outcome.result, path, self.manifest())
            self.window.statusBar().showMessage(f"Wrote {npz} and {manifest}", 8000)

    def save_png_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self.window, "Save view", "view.png", "PNG (*.png)")
        if path:
            self.save_png(path)

    def save_png(self, path: str) -> Path:
        widget = self.window.tabs.currentWidget()
        widget.grab().save(str(path))
        return Path(path)
