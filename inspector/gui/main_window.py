"""The main window: module tree, controls, activation and gradient panels, docks."""

from __future__ import annotations

import itertools
import json

from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDockWidget, QHBoxLayout, QLabel, QLineEdit, QMainWindow,
                               QMenu, QProgressBar, QSplitter, QTabWidget, QTreeView, QVBoxLayout, QWidget)

from inspector.core.engine import RunSpec
from inspector.core.errors import InspectorError
from inspector.core.inputs import list_samples
from inspector.core.models import torchvision_classifiers
from inspector.core.workbench import ModelRequest, RunRequest

from .controls import WEIGHTS, DeviceCombo, ModelCombo, TargetCombo, searchable
from .analysis_controller import AnalysisController
from .edits_controller import EditsController
from .layer_model import LayerFilterProxy, LayerTreeModel
from .side_panels import HookLog, InputView, PredictionsView
from .sources import SourcesMixin
from .tensor_panel import TensorPanel
from .window_settings import SettingsMixin
from .worker import WorkerThread

GRADIENT_SITES = {"grad_output": "grad_output", "grad_input": "grad_input", "weight gradient": "weight:grad",
                  "bias gradient": "bias:grad"}
AUTO_RUN_LIMIT_S = 3.0


def default_ticks(tree) -> set[str]:
    """A few layers worth looking at first: the first and last conv, and the head."""
    leaves = [l for l in tree.layers if l.is_leaf and l.path and l.calls]
    convs = [l.path for l in leaves if l.type_name.startswith("Conv")]
    picked = set(convs[:1] + convs[-1:])
    if leaves:
        picked.add(leaves[-1].path)
    return picked


class MainWindow(SourcesMixin, SettingsMixin, QMainWindow):
    """Signals
    -------
    sigResultShown(object): a RunOutcome was drawn (tests and benchmarks wait on it).
    sigFailedShown(str): an error message was shown.
    """

    sigResultShown = Signal(object)
    sigFailedShown = Signal(str)

    def __init__(self, settings: QSettings | None = None, restore: bool = True) -> None:
        super().__init__()
        self.setWindowTitle("Network Inspector")
        self.settings = settings or QSettings("NetworkInspector", "NetworkInspector")
        self.worker_thread = WorkerThread(start=False)
        self.worker = self.worker_thread.worker
        self._run_ids = itertools.count(1)
        self.last_run_id = 0
        self.outcome = None
        self.loaded = None
        self.tree = None
        self.model_request = ModelRequest()
        self.input_source = ""
        self._restoring_ticks: set[str] | None = None
        self._last_sites: set[str] = set()
        self.pending_target: str | None = None
        self._build()
        self.edits = EditsController(self)
        self.analysis = AnalysisController(self)
        self._connect()
        self.worker_thread.start()  # last: nothing above may leave a running thread behind
        if restore:
            self.restore_settings()
        else:
            self.load_model(ModelRequest())

    # -- building -------------------------------------------------------------------
    def _build(self) -> None:
        self.setAcceptDrops(True)
        bar = self.addToolBar("Run")
        bar.setObjectName("toolbar")
        self.model_combo = ModelCombo(torchvision_classifiers())
        self.weights_combo = QComboBox()
        self.weights_combo.addItems([*WEIGHTS, "checkpoint…"])
        self.input_combo = searchable(QComboBox())
        self.input_combo.setMinimumContentsLength(14)
        for name in list_samples():
            self.input_combo.addItem(f"sample:{name}")
        self.device_combo = DeviceCombo()
        self.target_combo = TargetCombo()
        self.auto_run = QCheckBox("Auto-run")
        self.auto_run.setChecked(True)
        for label, widget in (("Model", self.model_combo), ("Weights", self.weights_combo),
                              ("Input", self.input_combo), ("Device", self.device_combo),
                              ("Target", self.target_combo)):
            bar.addWidget(QLabel(f" {label} "))
            bar.addWidget(widget)
        self.open_model_action = QAction("Open model…", self)
        self.open_input_action = QAction("Open image…", self)
        self.run_action = QAction("Run", self, shortcut=QKeySequence("F5"))
        self.cancel_action = QAction("Cancel", self, shortcut=QKeySequence("Esc"))
        self.paste_action = QAction("Paste image", self, shortcut=QKeySequence.Paste)
        bar.addSeparator()
        for action in (self.run_action, self.cancel_action):
            bar.addAction(action)
        bar.addWidget(self.auto_run)
        menu = self.menuBar().addMenu("&File")
        for action in (self.open_model_action, self.open_input_action, self.paste_action):
            menu.addAction(action)
        self.addAction(self.paste_action)

        self.layer_model = LayerTreeModel(self)
        self.proxy = LayerFilterProxy(self)
        self.proxy.setSourceModel(self.layer_model)
        self.tree_view = QTreeView()
        self.tree_view.setModel(self.proxy)
        self.tree_view.setUniformRowHeights(True)
        self.tree_view.setContextMenuPolicy(Qt.CustomContextMenu)
        self.filter_edit = QLineEdit(placeholderText="Filter by name or type (regex)")
        tree_box = QWidget()
        tree_layout = QVBoxLayout(tree_box)
        tree_layout.setContentsMargins(2, 2, 2, 2)
        tree_layout.addWidget(self.filter_edit)
        tree_layout.addWidget(self.tree_view)
        self._dock("Modules", tree_box, Qt.LeftDockWidgetArea)

        self.layer_combo = QComboBox()
        self.layer_combo.setMinimumContentsLength(24)
        self.activation_panel = TensorPanel("Activation", diverging=False)
        self.gradient_panel = TensorPanel("Gradient", diverging=True)
        center = QWidget()
        center_layout = QVBoxLayout(center)
        self.grad_site_combo = QComboBox()
        self.grad_site_combo.addItems(list(GRADIENT_SITES))
        head = QHBoxLayout()
        head.addWidget(QLabel("Layer"))
        head.addWidget(self.layer_combo, 1)
        head.addWidget(QLabel("Gradient"))
        head.addWidget(self.grad_site_combo)
        center_layout.addLayout(head)
        split = QSplitter(Qt.Horizontal)
        split.addWidget(self.activation_panel)
        split.addWidget(self.gradient_panel)
        center_layout.addWidget(split, 1)
        self.tabs = QTabWidget()
        self.tabs.addTab(center, "Layer")
        self.setCentralWidget(self.tabs)

        self.input_view = InputView()
        self.predictions = PredictionsView()
        side = QWidget()
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(2, 2, 2, 2)
        side_layout.addWidget(self.input_view)
        side_layout.addWidget(QLabel("<b>Predictions</b>"))
        side_layout.addWidget(self.predictions)
        self._dock("Input and predictions", side, Qt.RightDockWidgetArea)
        self.hook_log = HookLog()
        log_dock = self._dock("Hook log", self.hook_log, Qt.BottomDockWidgetArea)
        self.resizeDocks([log_dock], [140], Qt.Vertical)

        self.status_device = QLabel()
        self.status_time = QLabel()
        self.status_memory = QLabel()
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(160)
        self.progress.hide()
        for widget in (self.status_device, self.status_time, self.status_memory, self.progress):
            self.statusBar().addPermanentWidget(widget)
        # 0 ms: changes made in one go collapse into one request; the worker's latest-wins
        # slot coalesces the rest, so a toggle starts its run at once.
        self.auto_timer = QTimer(self, singleShot=True, interval=0)
        self.resize(1400, 900)

    def _dock(self, title: str, widget: QWidget, area) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(title.replace(" ", "_"))
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _connect(self) -> None:
        self.worker.sigLoaded.connect(self._on_loaded)
        self.worker.sigResult.connect(self._on_result)
        self.worker.sigFailed.connect(self._on_failed)
        self.worker.sigProgress.connect(self._on_progress)
        self.worker.sigBusy.connect(self._on_busy)
        self.model_combo.sigChosen.connect(self._on_model_chosen)
        self.weights_combo.activated.connect(self._on_weights_chosen)
        self.input_combo.activated.connect(lambda _i: self.set_input(self.input_combo.currentText()))
        self.input_combo.lineEdit().returnPressed.connect(lambda: self.set_input(self.input_combo.currentText()))
        self.device_combo.activated.connect(lambda _i: self._on_device_chosen())
        self.target_combo.activated.connect(lambda _i: self.schedule_run())
        self.run_action.triggered.connect(self.run)
        self.cancel_action.triggered.connect(self.cancel)
        self.open_model_action.triggered.connect(self._on_open_model)
        self.open_input_action.triggered.connect(self._on_open_input)
        self.paste_action.triggered.connect(self.paste_image)
        self.layer_model.sigTicksChanged.connect(self._on_ticks_changed)
        self.filter_edit.textChanged.connect(self._on_filter)
        self.tree_view.selectionModel().currentChanged.connect(self._on_tree_current)
        self.tree_view.customContextMenuRequested.connect(self._on_tree_menu)
        self.layer_combo.currentIndexChanged.connect(lambda _i: self.show_layer())
        self.grad_site_combo.activated.connect(self._on_grad_site_chosen)
        self.auto_timer.timeout.connect(self.run)

    # -- actions --------------------------------------------------------------------
    def load_model(self, request: ModelRequest, force: bool = False) -> None:
        if force:
            self.tree = None
        self.model_request = request
        self.model_combo.set_source(request.source)
        self.statusBar().showMessage(f"Loading {request.source}…")
        self.worker.request_load(request, self.device_combo.device())

    def set_input(self, source: str) -> None:
        source = source.strip()
        if not source:
            return
        if self.input_combo.findText(source) < 0:
            self.input_combo.addItem(source)
        self.input_combo.setCurrentIndex(self.input_combo.findText(source))
        self.input_source = source
        self.schedule_run()

    def build_request(self) -> RunRequest | None:
        if self.tree is None or not self.input_source:
            return None
        compare = self.edits.active()
        # The input gradient needs a backward to the input: only while the comparison shows it.
        input_grad = compare and self.tabs.currentWidget() is self.edits.compare
        spec = RunSpec.make(self.layer_model.ticked(), self.sites(), self.edits.edits(),
                            self.target_combo.target(), input_grad=input_grad)
        return RunRequest(self.model_request, self.input_source, self.device_combo.device(), spec,
                          baseline=compare, analyse=True, run_id=next(self._run_ids))

    def sites(self) -> set[str]:
        """Activations and grad_output always; grad_input or parameter gradients when shown or edited."""
        sites = {"output", "grad_output"}
        shown = GRADIENT_SITES[self.grad_site_combo.currentText()]
        if shown == "grad_input":
            sites.add("grad_input")
        elif shown.endswith(":grad") or any(e.key.site == "grad" for e in self.edits.edits()):
            sites.add("params")
        return sites

    def set_gradient_site_from(self, sites) -> None:
        if "grad_input" in sites:
            self.grad_site_combo.setCurrentText("grad_input")
        elif "params" in sites:
            self.grad_site_combo.setCurrentText("weight gradient")
        else:
            self.grad_site_combo.setCurrentText("grad_output")

    def current_layer(self) -> str | None:
        return self.layer_combo.currentData()

    def panel_keys(self, name: str) -> tuple[str, str]:
        """The capture keys the panels show for layer `name` (`path` or `path#K`)."""
        layer, _, call = name.partition("#")
        suffix = f"#{call}" if call else ""
        site = GRADIENT_SITES[self.grad_site_combo.currentText()]
        grad = f"{layer}.{site}" if site.endswith(":grad") else f"{layer}:{site}{suffix}"
        return f"{layer}:output{suffix}", grad

    def _on_grad_site_chosen(self, _index: int) -> None:
        captured = self.outcome is not None and self.sites() <= set(self._last_sites)
        self.show_layer() if captured else self.schedule_run(force=True)

    def run(self) -> None:
        try:
            request = self.build_request()
        except InspectorError as exc:
            self._show_error(str(exc))
            return
        if request is None:
            return
        self.last_run_id = request.run_id
        self._last_sites = set(request.spec.sites)
        self.worker.request_run(request)

    def cancel(self) -> None:
        self.auto_timer.stop()
        self.worker.cancel()

    def schedule_run(self, force: bool = False) -> None:
        """Run soon (coalesced) when auto-run is on, or always when `force` (an edit changed)."""
        if self.auto_run.isChecked() or force:
            self.auto_timer.start()

    # -- slots ------------------------------------------------------------------------
    def _on_device_chosen(self) -> None:
        self.status_device.setText(self.device_combo.device())
        self.schedule_run()

    def _on_loaded(self, loaded, tree) -> None:
        first = self.tree is None or self.loaded is None or loaded.source != self.loaded.source
        self.loaded, self.tree = loaded, tree
        ticks = self._restoring_ticks
        if ticks is None:
            saved = self.settings.value(f"ticks/{loaded.source}")
            if saved:
                ticks = set(json.loads(str(saved)))
            elif not first:
                ticks = set(self.layer_model.ticked())
        self._restoring_ticks = None
        self.layer_model.set_tree(tree, ticks if ticks is not None else default_ticks(tree))
        self.tree_view.expandToDepth(0)
        for col in range(5):
            self.tree_view.resizeColumnToContents(col)
        self._sync_weights_combo(loaded)
        self.target_combo.set_labels(loaded.labels)
        if self.pending_target is not None:
            self.target_combo.set_target(self.pending_target)
            self.pending_target = None
        if not self.input_source:
            self.set_input(self.input_combo.currentText() if loaded.preprocess else "")
        self.statusBar().showMessage(f"Loaded {loaded.source} ({loaded.weights}). " + " ".join(loaded.notes), 8000)
        self.status_device.setText(self.device_combo.device())
        self.schedule_run()

    def _sync_weights_combo(self, loaded) -> None:
        """torchvision models choose random/pretrained; others show where their weights came from."""
        self.weights_combo.blockSignals(True)
        self.weights_combo.clear()
        if loaded.kind == "torchvision":
            self.weights_combo.addItems([*WEIGHTS, "checkpoint…"])
            self.weights_combo.setCurrentText("pretrained" if loaded.weights.startswith("pretrained") else "random")
        else:
            self.weights_combo.addItems([loaded.weights, "checkpoint…"])
        if loaded.weights not in WEIGHTS and not loaded.weights.startswith("pretrained") and loaded.kind == "torchvision":
            self.weights_combo.insertItem(0, loaded.weights)
            self.weights_combo.setCurrentIndex(0)
        self.weights_combo.blockSignals(False)

    def _on_ticks_changed(self, ticks) -> None:
        if self.loaded is not None:
            self.settings.setValue(f"ticks/{self.loaded.source}", json.dumps(sorted(ticks)))
        self.schedule_run()

    def _on_result(self, outcome) -> None:
        """Draw a result in two event-loop turns (activations first, then the rest), so the
        window stays responsive while big results are drawn."""
        if outcome.run_id != self.last_run_id:
            return  # a newer request is on its way: drop the stale result
        self.outcome = outcome
        result = outcome.result
        self._fill_layer_combo(result)
        self.show_layer(panels=(0,))
        self.predictions.show_result(result)
        self.input_view.show_input(result.input, self.loaded.preprocess if self.loaded else None)
        total = result.timings.get("total_s", 0.0)
        self.status_time.setText(f"run {total * 1000:.0f} ms")
        self.status_memory.setText(f"captures {result.held_bytes() / 2**20:.1f} MB")
        self.status_device.setText(result.device)
        if result.warnings:
            self.statusBar().showMessage(f"{len(result.warnings)} warning(s): {result.warnings[0]}", 10000)
        if total > AUTO_RUN_LIMIT_S and self.auto_run.isChecked():
            self.auto_run.setChecked(False)
            self.statusBar().showMessage(f"Auto-run turned off: one run takes {total:.1f} s. Press F5 to run.", 10000)
        QTimer.singleShot(0, self, lambda: self._finish_result(outcome))

    def _finish_result(self, outcome) -> None:
        if outcome is not self.outcome:
            return  # a newer result took over
        self.show_layer(panels=(1,))
        self.hook_log.show_result(outcome.result)
        self.sigResultShown.emit(outcome)

    def _on_failed(self, run_id: int, message: str, cancelled: bool) -> None:
        if run_id and run_id != self.last_run_id:
            return
        if cancelled:
            self.statusBar().showMessage(message, 5000)
        else:
            self._show_error(message)
        self.sigFailedShown.emit(message)

    def _show_error(self, message: str) -> None:
        self.hook_log.note(f"error: {message}")
        self.statusBar().showMessage(f"Error: {message}", 15000)

    def _on_progress(self, done: int, total: int) -> None:
        self.progress.setVisible(0 < done < total)
        if total:
            self.progress.setMaximum(total)
            self.progress.setValue(done)

    def _on_busy(self, busy: bool) -> None:
        self.cancel_action.setEnabled(busy)
        if not busy:
            self.progress.hide()

    def _on_filter(self, text: str) -> None:
        self.proxy.setFilterRegularExpression(text)
        if text:
            self.tree_view.expandAll()

    def _on_tree_current(self, current, _previous) -> None:
        path = self.layer_model.path_of(self.proxy.mapToSource(current))
        if path is None:
            return
        i = self.layer_combo.findData(path)
        if i >= 0:
            self.layer_combo.setCurrentIndex(i)

    def _on_tree_menu(self, pos) -> None:
        index = self.proxy.mapToSource(self.tree_view.indexAt(pos))
        path = self.layer_model.path_of(index)
        menu = QMenu(self)
        if path is not None:
            layer = self.tree.get(path)
            menu.addAction(f"Tick all {layer.type_name}", lambda: self.layer_model.tick_type(layer.type_name))
            menu.addAction(f"Untick all {layer.type_name}", lambda: self.layer_model.tick_type(layer.type_name, False))
            menu.addAction("Tick only this module", lambda: self.layer_model.set_subtree(path, True, only_self=True))
            self.extend_tree_menu(menu, path)
            menu.addSeparator()
        menu.addAction("Tick all leaves", self.layer_model.tick_leaves)
        menu.addAction("Tick none", lambda: self.layer_model.set_ticked(set()))
        menu.addSeparator()
        menu.addAction("Expand all", self.tree_view.expandAll)
        menu.addAction("Collapse all", self.tree_view.collapseAll)
        menu.popup(self.tree_view.viewport().mapToGlobal(pos))

    def extend_tree_menu(self, menu: QMenu, path: str) -> None:
        self.edits.extend_tree_menu(menu, path)

    # -- panels -------------------------------------------------------------------------
    def _fill_layer_combo(self, result) -> None:
        keep = self.layer_combo.currentData()
        names = []
        for capture in result.captures.values():
            key = capture.key
            if key.site in ("output", "grad_output") and key.index in (None, 0):
                name = key.layer + (f"#{key.call}" if key.call else "")
                if name not in names:
                    names.append(name)
        self.layer_combo.blockSignals(True)
        self.layer_combo.clear()
        for name in names:
            self.layer_combo.addItem(name, name)
        i = self.layer_combo.findData(keep)
        self.layer_combo.setCurrentIndex(i if i >= 0 else 0)
        self.layer_combo.blockSignals(False)

    def show_layer(self, name: str | None = None, panels: tuple[int, ...] = (0, 1)) -> None:
        """Draw the selected layer's captures from the last result (no re-run); `panels` picks
        the activation (0) and/or gradient (1) panel."""
        if name is not None:
            i = self.layer_combo.findData(name)
            if i >= 0 and i != self.layer_combo.currentIndex():
                self.layer_combo.setCurrentIndex(i)  # re-enters through currentIndexChanged
                return
        if self.outcome is None:
            return
        name = self.layer_combo.currentData()
        if not name:
            self.activation_panel.clear("Tick a module to see its activations.")
            self.gradient_panel.clear()
            return
        captures = self.outcome.result.captures
        both = zip((self.activation_panel, self.gradient_panel), self.panel_keys(name))
        for panel, key in (pair for i, pair in enumerate(both) if i in panels):
            capture = captures.get(key) or captures.get(f"{key}[0]")
            if capture is None or capture.array is None:
                panel.clear(f"Nothing captured at {key}.")
            else:
                panel.show_capture(capture.name, capture.array, capture.stats)

    # -- settings and closing ------------------------------------------------------------
    def closeEvent(self, event) -> None:
        self.auto_timer.stop()
        self.save_settings()
        self.worker_thread.stop()
        super().closeEvent(event)
