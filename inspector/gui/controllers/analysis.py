"""Wires attribution, gradient flow, statistics, the first NaN/Inf and export to the state.

Attribution requests go through the state (`AppState.analysis`). The gradient flow and the
statistics table are drawn while their tab is on screen; a hidden one is drawn when shown.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from PySide6.QtCore import QObject

from inspector.core.common.errors import InspectorError
from inspector.core.engine.export import export_npz, picture
from inspector.core.records.manifest import run_manifest
from inspector.core.engine.diagnostics import first_nonfinite
from inspector.gui.common import file_dialogs
from inspector.gui.views.tensor_panel import STATS_STOPPED

from .trust import TrustController


class AnalysisController(QObject):
    """Attribution, gradient flow, statistics, the first NaN/Inf and exports, wired to the state."""

    def __init__(self, state, attribution, flow, stats, layer_model) -> None:
        super().__init__(state)
        self.state, self.attribution, self.flow, self.stats = state, attribution, flow, stats
        self.layer_model = layer_model
        self.nonfinite: tuple[str, str] | None = None
        self.attribution.sigRequested.connect(state.analysis.request_attribution)
        self.attribution.sigCompare.connect(state.analysis.compare)
        state.analysis.sigCompared.connect(self._on_compared)
        state.analysis.sigCompareFailed.connect(self.attribution.fail_cell)
        state.analysis.sigCompareEnded.connect(self.attribution.end_comparison)
        self.attribution.export.clicked.connect(self.export_comparison)
        state.analysis.sigChoiceRestored.connect(self.attribution.restore)
        state.analysis.sigAttribution.connect(self._on_attribution)
        state.analysis.sigAttributionFailed.connect(self.attribution.show_error)
        state.sigModelLoaded.connect(self._on_loaded)
        state.sigResult.connect(self._on_result)
        state.sigStatsUpdated.connect(self._on_stats_updated)
        state.sigStatsStopped.connect(self._on_stats_stopped)
        state.sigViewShown.connect(lambda _v: self._on_view_shown())
        self._stats_of = None  # the outcome the statistics table shows
        self._flow_of = None  # the outcome the gradient flow shows
        self._analysed = None  # the outcome whose first NaN/Inf was looked for
        self._info_of_choices = None  # the ModelInfo the Attribution tab's choices are for
        self.trust = TrustController(state, attribution)  # "Check these maps" under Compare all

    def _on_loaded(self, info, _ticks) -> None:
        if info is not self._info_of_choices and (self._info_of_choices is None
                                                  or info.request != self._info_of_choices.request):
            self.attribution.forget()  # another model: its map (or error) is not this one's
            self.state.analysis.forget()  # nor one still being made for it
        self._info_of_choices = info
        auto = ("auto (last block's first norm)" if info.tokens is not None
                else "auto (for boxes)" if info.task == "detection" else "auto (the map the head reads)")
        self.attribution.set_choices(info.tree.convolutions(), [], auto)

    def _on_view_shown(self) -> None:
        self._fill_stats_if_shown()
        self._draw_flow_if_shown()

    def _on_result(self, outcome) -> None:
        info = self.state.model
        if info is not None:
            self.attribution.set_choices(info.tree.convolutions(), outcome.result.predictions,
                                         detections=outcome.result.detections)
            self.attribution.each_prompt.offer(outcome.result.target, self.attribution.target)  # CLIP's prompts
            stored = self.state.analysis.take_restored(info.request.source)
            if stored is not None:  # a session's map, shown as it was kept, once it fits this model's input
                self._show_restored(stored, info.input_shape)
        if outcome.analyse and not outcome.complete:
            self.stats.show_pending("Working out the statistics of every capture…")
        self._fill_stats_if_shown()
        if outcome.analysis is None and outcome.analyse:
            self.flow.show_pending("Working out the gradient flow…")
            return  # it comes with the state's sigStatsUpdated
        self._analyse(outcome)

    def _show_restored(self, stored, input_shape) -> None:
        from inspector.core.common.errors import SpecError
        from inspector.core.session.stored import check_fits

        try:
            check_fits(stored, input_shape)
        except SpecError as exc:  # made for another input size: said, not drawn (the Attribution view would raise)
            self.state.analysis.found = None
            self.state.notify("error", f"The session's kept map is not shown: {exc} Compute makes it again.")
            return
        self._on_attribution(dataclasses.replace(stored, notes=stored.notes + (
            "kept in the session (Compute makes it again)",)))

    def _on_stats_stopped(self, outcome) -> None:
        if not outcome.complete:
            self.stats.show_pending(STATS_STOPPED)
        if outcome.analyse and outcome.analysis is None:
            self.flow.show_pending("Gradient flow: stopped (Esc); press F5 to work it out.")

    def _on_stats_updated(self, outcome) -> None:
        """The statistics, then the diagnostics, of the result on screen have arrived."""
        self._fill_stats_if_shown()
        if (outcome.analysis is not None or not outcome.analyse) and outcome is not self._analysed:
            self._analyse(outcome)

    def _analyse(self, outcome) -> None:
        """The first NaN/Inf (marked in the module tree, said in the banner); the gradient flow if shown."""
        self._analysed = outcome
        analysis = outcome.analysis
        if analysis is not None:
            self.nonfinite = analysis.nonfinite
        else:
            self.nonfinite = first_nonfinite(outcome.result)
        model = self.layer_model
        if self.nonfinite and self.nonfinite[0] == "input":
            model.set_highlight(None)  # the model's input is no module: nothing to mark in the tree
            self.state.notify("warning", "The model's input holds NaN/Inf, so every number computed from it may "
                                         "be NaN/Inf too; check the input file.")
        elif self.nonfinite:
            key, direction = self.nonfinite
            layer = key.split(":")[0]
            model.set_highlight(layer if layer in model.paths() else None)
            self.state.notify("warning", f"The first NaN/Inf ({direction}) is at {key}; it is marked red in "
                                         f"the module tree.", ("Show it", lambda: self._show_layer(layer)))
        else:
            model.set_highlight(None)
        self._draw_flow_if_shown()

    def _show_layer(self, layer: str) -> None:
        if layer in self.state.layer_names():
            self.state.select_layer(layer)
        self.state.set_view("layer")

    def _draw_flow_if_shown(self) -> None:
        """Gradient flow and dead units, from what the worker worked out, while its tab is on screen."""
        outcome = self._analysed
        if outcome is None or outcome is not self.state.outcome or outcome is self._flow_of \
                or self.state.view != "flow":
            return
        analysis = outcome.analysis
        if analysis is not None:
            self.flow.show_result(outcome.result, analysis.flow, analysis.dead)
        else:
            self.flow.show_result(outcome.result)  # diagnostics were not asked for: a small result
        self._flow_of = outcome

    def _fill_stats_if_shown(self) -> None:
        """The statistics table (one row per capture) is filled only when it is looked at, and only
        once the worker has sent every capture's statistics."""
        outcome = self.state.outcome
        if outcome is None or outcome is self._stats_of or self.state.view != "stats":
            return
        if outcome.analyse and not outcome.complete:
            return  # the table says it is waiting; the update fills it
        self.stats.show_result(outcome.result)
        self._stats_of = outcome

    def _on_compared(self, name: str, found) -> None:
        self.attribution.add_cell(name, found, self._picture_for(found))

    def _picture_for(self, found):
        """The input as the model sees it, a detector's box the map explains outlined (None: no input)."""
        outcome, info = self.state.outcome, self.state.model
        result = outcome.result if outcome else None
        if result is None or result.input is None:
            return None
        pic = picture(result.input, info.preprocess if info else None)
        if found.target_detection is not None and found.detections:
            from inspector.core.detection.picture import draw_detections
            from inspector.core.pictures.fit import drawn_side

            # drawn larger than the input, a whole number of times: on a 32-pixel input the tag's fixed font
            # covered a third of the map; the views stretch the picture over the map's pixels
            pic = draw_detections(pic, found.detections, 2.0, found.target_detection, drawn_side(pic.shape))
        return pic

    def _on_attribution(self, found) -> None:
        info = self.state.model
        pic = self._picture_for(found)
        baseline = None
        if found.baseline is not None and found.baseline.ndim == 3 and found.baseline.shape[0] == 3:
            baseline = picture(found.baseline[None], info.preprocess if info else None)
        self.attribution.show_attribution(pic, found, list(info.labels) if info and info.labels else None, baseline)

    def export_comparison(self) -> None:
        """Save the method comparison: NAME.npz, NAME.json and NAME.png, each written whole or not at all."""
        path = file_dialogs.save_file(self.attribution, "export", "Export the method comparison", "methods.json",
                                      "Comparison (*.json)")
        if not path:
            return
        try:
            from inspector.gui.figures.figure import caption_of

            written = self.attribution.comparison.export(Path(path), about=self.manifest(),
                                                         caption=caption_of(self.state, layer=False))
        except InspectorError as exc:
            self.attribution.comparison.status.setText(f"<span style='color:#b00'>{exc}</span>")
            return
        self.attribution.comparison.status.setText("Saved " + ", ".join(p.name for p in written) + ".")

    # -- export ---------------------------------------------------------------------------------
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
        path = file_dialogs.save_file(self.stats, "export", "Export captures", "captures.npz", "NumPy (*.npz)")
        if path:
            self.export(path)

    def export(self, path: str) -> None:
        held = self.state.outcome.result.held
        if held:  # a remote engine sent the shown layers' arrays only: an export of the rest would miss them
            self.state.notify("error", f"Not exported: {len(held)} captures are held on the engine ({held[0]}, ...); "
                                       f"`network-inspector capture --engine {self.state.engine_url}` writes them "
                                       f"all.")
            return
        try:
            npz, manifest = export_npz(self.state.outcome.result, path, self.manifest())
        except (OSError, ValueError) as exc:
            self.state.notify("error", f"Could not export to {path}: {exc}")
            return
        self.state.notify("info", f"Exported the captures to {npz} and the manifest to {manifest}.")
