"""The main window: lays out the module tree, choosers, panels and docks, and wires them to the state.

Every choice goes to the `AppState`; every change shown comes from its signals. The
window draws results (activations first, the rest one event-loop turn later) and never
holds a module or a tensor.
"""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QDockWidget,
    QMainWindow,
    QMessageBox,
)

from inspector.gui.common import file_dialogs

from ..figures import save as figure_save
from ..controllers.against import AgainstController
from ..controllers.analysis import AnalysisController
from ..controllers.atlas import AtlasController
from ..controllers.detections import DetectionsController
from ..controllers.edits import EditsController
from ..docks.live_bar import rate_text
from ..common.first_paint import AfterFirstPaint
from ..common.prompt_box import TASK as PROMPT_TASK
from .layer_panels import LayerPanelsMixin
from .layout import dock_tabs_width, lay_out
from .menus import build_menus
from ..common.paint_turns import after_paint, settle_layout
from .sources import SourcesMixin
from ..state import GRADIENT_SITES, AppState
from .token_grid_mixin import TokenGridMixin
from .tree_menu import RightPressKeepsCurrent
from ..views.panel_links import link_panels
from .window_fit import fit_to_screen

_REOPENED: set = set()  # the windows `reopen_on` made (the first is the app's): kept until they are destroyed
LIVE_HISTOGRAM_EVERY_S = 0.5  # while a video plays, the value histograms are redrawn twice a second
LIVE_TEXT_EVERY_S = 0.25  # ... and its frame number and rate four times a second


def ask_trust_dialog(parent) -> callable:
    def ask(name: str, what: str) -> bool:
        answer = QMessageBox.question(parent, "Trust this file?",
                                      f"{name} {what}. Only continue if you trust where it came from.")
        return answer == QMessageBox.Yes
    return ask


def _of_state(name: str) -> property:
    """A read-only attribute of the window that is its state's `name` (what tests and tools read)."""
    return property(lambda window: getattr(window.state, name), doc=f"The state's `{name}`.")


class MainWindow(SourcesMixin, TokenGridMixin, LayerPanelsMixin, QMainWindow):
    """Signals
    -------
    sigResultShown(object): a RunOutcome was drawn (tests and benchmarks wait on it).
    sigFailedShown(str): an error message was shown.
    """

    sigResultShown = Signal(object)
    sigFailedShown = Signal(str)

    def __init__(self, settings: QSettings | None = None, restore: bool = True, ask_trust=None,
                 engine_after_paint: bool = False, engine: str | None = None, token_file=None) -> None:
        """`engine`: the URL of a `network-inspector serve` to run on (`token_file`: its token file)."""
        super().__init__()
        self.setWindowTitle("Network Inspector" + (f" — engine {engine}" if engine else ""))
        self.settings = settings or QSettings("NetworkInspector", "NetworkInspector")
        self._ask_trust, self._token_file = ask_trust, token_file
        self.state = AppState(self.settings, ask_trust or ask_trust_dialog(self), self, engine=engine,
                              token_file=token_file)
        file_dialogs.use(self.settings)  # each kind of file dialog opens where the last one was chosen
        self._live_text_at = 0.0  # when the live bar's text was last drawn
        self.token_grid = None  # the patch grid token captures are drawn on (inspector.core.records.tokens)
        self._outcome_drawn = None  # the last result _on_result drew
        lay_out(self)
        v, s = self.views, self.state
        self.edits = EditsController(s, v.edits_panel, v.compare, self.edits_dock, (v.activation, v.gradient))
        self.against = AgainstController(s, v.compare, v.layer_model, v.tree_view)
        self.analysis = AnalysisController(s, v.attribution, v.flow, v.stats, v.layer_model)
        self.atlas = AtlasController(s, v.atlas, self.atlas_dock, (v.activation, v.gradient), v.compare)
        from ..controllers.graph import GraphController
        from .tree_menu import tree_menu

        self.graph = GraphController(s, v.graph, v.layer_model, v.tree_view, self.proxy, lambda p: tree_menu(self, p))
        from ..controllers.graph_values import GraphValuesController

        self.graph_values = GraphValuesController(s, self.graph, v.graph)  # the values of the last run on the graph
        from ..controllers.concepts import ConceptsController

        self.concepts = ConceptsController(self, v.concepts, self.concepts_dock)  # its build also from the Atlas dock
        self.atlas.offer_concepts(self.concepts.build_dialog)
        from ..controllers.evaluation import EvaluationController

        self.evaluation = EvaluationController(s, self, self.cancel_action)  # Attribution > Evaluate…
        build_menus(self)
        self._connect()
        self._restore_layout()
        self.state.start(restore, engine=not engine_after_paint)  # last: no running thread left behind above
        if engine_after_paint:  # the app's start: torch's loading would stall the first paint
            AfterFirstPaint(self, self.state.worker_thread.start)

    # -- the engine ----------------------------------------------------------------------------
    def connect_dialog(self) -> None:
        """File > Connect to engine…: an address and token file; the window reopens on that engine."""
        from PySide6.QtWidgets import QDialog

        from ..views.connect_dialog import ConnectDialog

        dialog = ConnectDialog(self.state.engine_url or str(self.settings.value("engine/url", "") or ""),
                               self._token_file or str(self.settings.value("engine/token-file", "") or ""), self)
        if dialog.exec() == QDialog.Accepted:
            self.reopen_on(dialog.url or None, dialog.token_file)

    def reopen_on(self, engine: str | None, token_file=None) -> MainWindow:
        """This window again on `engine` (None: the engine in this process): what it shows is saved, a window on
        that engine restores it, and this one closes. The new window."""
        self.settings.setValue("engine/url", engine or "")  # offered by the dialog next time
        self.settings.setValue("engine/token-file", str(token_file or ""))
        self.state.store.save_window(self.saveGeometry(), self.saveState())
        self.state.store.save(self.state)
        window = MainWindow(settings=self.settings, ask_trust=self._ask_trust, engine=engine, token_file=token_file)
        _REOPENED.add(window)
        window.destroyed.connect(lambda: _REOPENED.discard(window))
        window.show()  # before this one closes: the app goes on
        self.close()
        self.deleteLater()
        return window

    # -- what tests and tools read ------------------------------------------------------------
    worker = _of_state("worker")
    worker_thread = _of_state("worker_thread")
    outcome = _of_state("outcome")
    loaded = _of_state("model")

    # -- building -------------------------------------------------------------------------
    def _arrange_docks(self) -> None:
        """Predictions, edits, the atlas and concepts share the right column as tabs (each gets its full height at
        1280x800)."""
        self.tabifyDockWidget(self.side_dock, self.edits_dock)
        self.tabifyDockWidget(self.edits_dock, self.atlas_dock)
        self.tabifyDockWidget(self.atlas_dock, self.concepts_dock)
        self.side_dock.raise_()
        right = max(320, dock_tabs_width(self))  # each tab's title whole
        self.resizeDocks([self.modules_dock, self.side_dock], [290, right], Qt.Horizontal)

    def _restore_layout(self) -> None:
        self._arrange_docks()
        self.default_layout = self.saveState()
        geometry, layout = self.state.store.window()
        if geometry is not None:
            self.restoreGeometry(geometry)
        if layout is not None:
            self.restoreState(layout)

    def reset_layout(self) -> None:
        for dock in self.findChildren(QDockWidget):
            dock.setFloating(False)
            dock.show()
        self.restoreState(self.default_layout)
        fit_to_screen(self)

    def _connect(self) -> None:
        s = self.state
        s.sigEngineReady.connect(lambda devices: self.device_combo.set_devices(devices, s.device))
        s.sigModelShown.connect(self._on_model_shown)
        s.sigModelLoaded.connect(self._on_loaded)
        s.sigInputShown.connect(self._show_input_source)
        s.sigDeviceShown.connect(self.device_combo.set_device)
        s.sigTargetShown.connect(self.target_combo.set_target)
        s.sigTargetShown.connect(self.prompt_box.show_target)
        self.prompt_box.sigTarget.connect(s.set_target)
        self.prompt_box.sigRefused.connect(lambda why: self.statusBar().showMessage(why, 8000))
        s.sigTicksSet.connect(self.layer_model.set_ticked)
        s.sigResult.connect(self._on_result)
        s.sigStatsUpdated.connect(self._on_stats_updated)
        s.sigStatsStopped.connect(self._on_stats_stopped)
        s.sigFailed.connect(self._on_failed)
        s.sigNotice.connect(self._on_notice)
        s.sigNoticeOver.connect(self.banner.dismiss_about)
        s.sigPhase.connect(self.run_status.set_phase)
        s.sigEngineWhere.connect(self.run_status.set_engine)
        s.held.sigArrived.connect(lambda outcome: outcome is s.outcome and self.show_layer())
        s.sigAutoRun.connect(self.auto_run.setChecked)
        s.sigUnrun.connect(self._on_unrun)
        s.sigProgress.connect(self.run_status.set_progress)
        s.sigBusy.connect(self.cancel_action.setEnabled)
        s.sigCatalogue.connect(self.model_combo.set_catalogue)
        self.model_combo.sigChosen.connect(self._on_model_chosen)
        self.model_combo.sigCatalogueWanted.connect(s.request_catalogue)
        self.weights_combo.sigChosen.connect(self._on_weights_chosen)
        self.input_combo.activated.connect(lambda _i: s.set_input(self.input_combo.currentText()))
        self.input_combo.lineEdit().returnPressed.connect(lambda: s.set_input(self.input_combo.currentText()))
        self.device_combo.activated.connect(lambda _i: s.set_device(self.device_combo.device()))
        self.target_combo.activated.connect(lambda _i: s.set_target(self.target_combo.target()))
        self.auto_run.toggled.connect(s.set_auto_run)
        self.run_action.triggered.connect(s.run)
        self.cancel_action.triggered.connect(s.cancel)
        self.layer_model.sigTicksChanged.connect(s.set_ticks)
        self.tree_view.selectionModel().currentChanged.connect(self._on_tree_current)
        self.tree_view.customContextMenuRequested.connect(self._on_tree_menu)
        self._right_press = RightPressKeepsCurrent(self.tree_view.viewport())  # the menu alone, nothing picked
        self.layer_combo.currentIndexChanged.connect(lambda _i: s.select_layer(self.layer_combo.currentData()))
        s.sigLayerSelected.connect(self._on_layer_selected)
        link_panels(self.activation_panel, self.gradient_panel)  # the enlarged channel and cursor, where linked
        self.grad_site_combo.activated.connect(lambda _i: s.select_grad_site(self.grad_site_combo.currentText()))
        s.sigGradSiteShown.connect(self._show_grad_site)
        s.sigQuerySet.connect(self._on_query_set)
        s.folder.sigShown.connect(self._on_folder_shown)
        self.folder_bar.sigGoTo.connect(s.folder.go_to)
        self.folder_bar.sigStep.connect(s.folder.step)
        s.live.sigStatus.connect(self._on_live)
        self.live_bar.sigPause.connect(s.live.pause)
        self.live_bar.sigStep.connect(s.live.step)
        self.live_bar.sigSnapshot.connect(s.live.snapshot)
        self.live_bar.sigStop.connect(s.live.close)
        self.tabs.currentChanged.connect(lambda _i: s.set_view(self.tab_views[self.tabs.currentWidget()]))
        s.sigViewShown.connect(self._on_view_shown)
        self.input_view.sigClicked.connect(self._on_input_clicked)
        self.input_view.sigBoxDragged.connect(self._on_box_dragged)
        self.detections = DetectionsController(s, self.input_view, self.predictions)
        for view in (self.views.compare, self.views.attribution):  # what they show of a detector's boxes
            self.input_view.sigMinScore.connect(view.set_min_score)

    # -- what the state says -----------------------------------------------------------------
    def _on_view_shown(self, view: str) -> None:
        widget = next(w for w, name in self.tab_views.items() if name == view)
        if self.tabs.currentWidget() is not widget:
            self.tabs.setCurrentWidget(widget)
        if view == "layer":
            self.show_layer()  # hidden, it was not drawn

    def _on_model_shown(self, request) -> None:
        self.model_combo.set_source(request.source)
        loaded = self.state.model
        if loaded is not None and request == loaded.request:  # shown again after a failed load: its weights too
            self.weights_combo.show_loaded(loaded)

    def _on_loaded(self, info, ticks) -> None:
        self.layer_model.set_tree(info.tree, ticks)
        self.tree_view.expandToDepth(0)
        self.filter_box.fit_columns()  # the output shapes in view
        self.weights_combo.show_loaded(info)
        self.set_token_grid(info.tokens)
        self.set_layouts(info.tree.layouts())
        self.target_combo.set_labels(list(info.labels) if info.labels else None, dense=info.task == "segmentation",
                                     boxes=info.task == "detection")
        self.input_view.forget_min_score()  # the next model's boxes are shown from its own default
        self.views.attribution.min_score = None
        self.target_combo.set_target(self.state.target)
        for action in self.prompt_actions:  # prompts for CLIP and SigLIP
            action.setVisible(info.task == PROMPT_TASK)
        self.prompt_box.show_target(self.state.target)
        self.statusBar().showMessage(f"Loaded {info.source} ({info.weights}). " + " ".join(info.notes), 8000)
        settle_layout()  # the window painted once at its new sizes, not painted, laid out and painted again

    def _show_input_source(self, source: str) -> None:
        if self.input_combo.findText(source) < 0:
            self.input_combo.addItem(source)
        self.input_combo.setCurrentIndex(self.input_combo.findText(source))

    def _on_folder_shown(self, folder) -> None:
        self.folder_bar.show_folder(folder)
        for action in (self.next_image_action, self.previous_image_action):
            action.setEnabled(folder is not None)

    def _on_live(self, status) -> None:
        playing = status is not None and not status["paused"] and not status["ended"]
        now = time.perf_counter()
        if playing and self.run_status.playing and now - self._live_text_at < LIVE_TEXT_EVERY_S:
            return  # text that changes every frame would relayout and repaint the bars every frame
        self._live_text_at = now
        self.live_bar.show_status(status)
        self.run_status.set_live(rate_text(status) if status else "", playing)
        every = LIVE_HISTOGRAM_EVERY_S if playing else 0.0
        if every != self.activation_panel.histogram_every_s:
            for panel in (self.activation_panel, self.gradient_panel):
                panel.histogram_every_s = every
            if playing:
                self.hook_log.setPlainText("While the video plays the hook log is not updated; pause to see "
                                           "the hooks of the frame on screen.")
            if not playing:
                self.show_layer()  # paused or stopped: the histograms of the frame on screen

    def _show_grad_site(self, site: str) -> None:
        label = next((k for k, v in GRADIENT_SITES.items() if v == site), None)
        if label is not None and self.grad_site_combo.currentText() != label:
            self.grad_site_combo.setCurrentText(label)
        self.show_layer()

    def _on_unrun(self, waiting: bool) -> None:
        """With auto-run off, the switch says when a change has not run yet."""
        self.auto_run.setText("Auto-run (off: changes wait for F5)" if waiting else "Auto-run")
        self.auto_run.setStyleSheet("QCheckBox { color: #a05a00; font-weight: bold; }" if waiting else "")

    def _on_notice(self, notice) -> None:
        self.banner.show_notice(notice)
        self.hook_log.note(f"{notice.level}: {notice.text}")

    def _on_failed(self, failure) -> None:
        if failure.what != "attribution":
            self.sigFailedShown.emit(failure.message)

    def _on_result(self, outcome) -> None:
        """Draw in event-loop turns (input, predictions, activations; the gradients, or the Compare tab a row a
        turn; the worker told to go on), so the window stays responsive; the Layer tab only while on screen."""
        self.run_status.set_phase("Drawing")
        self._outcome_drawn, result = outcome, outcome.result
        for panel in (self.activation_panel, self.gradient_panel):
            panel.set_stats_stopped(False)
        self._fill_layer_combo()
        feed = self.state.live.feed
        playing = feed is not None and not feed.paused  # a video's frames: drawn a panel a turn
        if self.state.view == "layer":  # the histograms and statistics in later turns (_draw_details)
            self.show_layer(panels=(0,), details=playing)
        self._show_input(result)
        self.predictions.min_score = self.input_view.min_score  # a detector's boxes: as many listed as drawn
        self.predictions.show_result(result)
        self.run_status.show_result(result)
        if result.warnings:
            self.statusBar().showMessage(f"{len(result.warnings)} warning(s): {result.warnings[0]}", 10000)
        # A timer (a zero-delay call runs in the same batch of posted events): the activations are painted first.
        after_paint(self, lambda: self._draw_details(outcome, self.activation_panel, self._finish_result))

    def _draw_details(self, outcome, panel, then) -> None:
        """The histogram, statistics and row under the maps of `panel`, a turn after its maps (painted first), and
        `then(outcome)` a turn later: a first result's panels took 40-70 ms of the GUI thread a turn."""
        if outcome is not self.state.outcome:
            return  # a newer result took over
        panel.show_details()
        after_paint(self, lambda: then(outcome))

    def _finish_result(self, outcome) -> None:
        if outcome is not self.state.outcome:
            return  # a newer result took over
        feed = self.state.live.feed
        playing = feed is not None and not feed.paused  # a video's frames: many times a second
        if not playing:
            self.hook_log.show_result(outcome.result)
        # The worker goes on a turn after the last drawing is painted (its statistics would take the CPU from the
        # paint); a playing video's next frame is asked for at once.
        later = lambda: QTimer.singleShot(1, self, lambda: self._result_drawn(outcome))  # noqa: E731
        drawn = (lambda: self._result_drawn(outcome)) if playing else later
        if self.state.view == "layer":
            self.show_layer(panels=(1,), details=playing)
            if playing:  # (a video that began to play since the activations were drawn: theirs too)
                self.activation_panel.show_details()
            else:  # after_paint has waited for that paint already: no 1 ms timer more (it added 1-2 ms a result)
                after_paint(self, lambda: self._draw_details(outcome, self.gradient_panel, self._result_drawn))
                return
        elif self.state.view == "compare":  # a row a turn, the input and predictions painted first
            self.edits.refresh(done=drawn)
            return
        drawn()

    def _result_drawn(self, outcome) -> None:
        if outcome is not self.state.outcome:
            return  # a newer result took over
        self.state.result_drawn()
        self.run_status.set_phase(self.state.phase)  # the worker may still work out statistics
        self.sigResultShown.emit(outcome)

    def _on_stats_updated(self, outcome) -> None:
        """The statistics that were still being worked out when the panels were drawn."""
        if self.state.view != "layer":
            return  # drawn with the panels when the Layer tab is shown
        for panel in (self.activation_panel, self.gradient_panel):
            capture = outcome.result.captures.get(panel.key)
            if capture is not None:
                panel.show_stats(capture.stats)

    def _on_stats_stopped(self, outcome) -> None:
        if outcome is self.state.outcome:
            for panel in (self.activation_panel, self.gradient_panel):
                panel.set_stats_stopped(True)

    def _on_input_clicked(self, fy: float, fx: float) -> None:
        """A click on the input picks the patch whose attention the panels draw, or a detector's box."""
        from inspector.core.records.tokens import query_at

        if self.detections.click(fy, fx):
            return
        grid = self.token_grid
        if grid is not None:
            self.state.set_query(query_at(grid, fy, fx))

    def _show_input(self, result) -> None:
        info = self.loaded
        self.input_view.show_input(result.input, info.preprocess if info else None, result.classes,
                                   list(info.labels) if info and info.labels else None, result.detections,
                                   result.target_detection, result.extras)
        for panel in (self.activation_panel, self.gradient_panel):  # what an enlarged map is laid over
            panel.set_backdrop(self.input_view.rgb)
        self.views.compare.set_backdrop(self.input_view.rgb, self.input_view.chosen_min_score,  # a detector's boxes
                                        result.detections is not None)

    def _on_box_dragged(self, y0: float, x0: float, y1: float, x1: float) -> None:
        """A box dragged on a segmentation's input: the target becomes that class over the box."""
        outcome, info = self.state.outcome, self.loaded
        if outcome is None or info is None or info.task != "segmentation" or outcome.result.input is None:
            return
        h, w = outcome.result.input.shape[-2:]
        target = self.state.target
        cls = target.split("@")[0][4:] if target.startswith("seg:") else str(outcome.result.target_index or 0)
        box = f"{int(x0 * w)},{int(y0 * h)},{max(int(x1 * w), int(x0 * w) + 1)},{max(int(y1 * h), int(y0 * h) + 1)}"
        chosen = f"seg:{cls}@{box}"
        self.state.set_target(chosen)  # the Target chooser shows it (sigTargetShown)

    def _on_query_set(self, token: int) -> None:
        for panel in (self.activation_panel, self.gradient_panel):
            panel.set_query(token)
        self.show_layer()

    # -- saving the figure ----------------------------------------------------------------------
    def save_png(self, path: str) -> Path | None:
        """The figure at 1x as a PNG (File > Save view, folded into Save figure)."""
        if Path(path).suffix.lower() != ".png":
            self.state.notify("error", f"Could not write {path}: name a .png file.")
            return None
        return self.save_figure(path, 1.0)

    def save_figure_dialog(self) -> None:
        figure_save.ask_and_save(self)

    def save_figure(self, path: str, scale: float = 2.0) -> Path | None:
        """The figure of the tab on screen with its caption under it: PNG at `scale`, or SVG (see figure_save)."""
        return figure_save.save_figure(self, path, scale)

    # -- closing ------------------------------------------------------------------------------
    def closeEvent(self, event) -> None:
        self.state.store.save_window(self.saveGeometry(), self.saveState())
        self.graph.stop()
        self.state.stop()
        super().closeEvent(event)
