"""The window's layout: toolbar, module tree, central tabs, side docks; the views it hands over.

`lay_out(window)` builds every widget of the main window once and returns the `Views` the
controllers get; `add_dock` makes a dock (scrolling where its content may be taller than the screen).
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSplitter,
    QTabBar,
    QTabWidget,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from inspector.core.inputs.samples import list_samples

from ..common.controls import DeviceCombo, ModelCombo, TargetCombo, WeightsCombo, completes, content_free, searchable
from ..common.prompt_box import PromptBox
from ..docks.edits_panel import EditsPanel
from ..docks.folder_bar import FolderBar
from ..docks.live_bar import LiveBar
from .run_status import RunStatus
from ..state import GRADIENT_SITES
from ..views.atlas_view import AtlasView
from ..views.attribution.view import AttributionView
from ..views.compare.view import CompareView
from ..views.concepts.view import ConceptsView
from ..views.diagnostics_views import GradientFlowView, StatsTable
from ..views.graph.tab import GraphTab
from ..views.layer_filter import LayerFilterBox
from ..views.layer_model import LayerTreeModel
from ..views.message_banner import MessageBanner
from ..views.side_panels import HookLog, InputView, PredictionsView
from ..views.tensor_panel import TensorPanel
from .window_fit import fit_to_screen

#: The central tabs, in order: the state's name of each view, and its tab's title.
TABS = (("layer", "Layer"), ("graph", "Graph"), ("compare", "Compare"), ("attribution", "Attribution"),
        ("flow", "Gradient flow"), ("stats", "Statistics"))


@dataclass
class Views:
    """The views the window lays out and hands to the controllers (each gets its own)."""

    activation: TensorPanel
    gradient: TensorPanel
    compare: CompareView
    attribution: AttributionView
    flow: GradientFlowView
    stats: StatsTable
    atlas: AtlasView
    edits_panel: EditsPanel
    graph: GraphTab
    layer_model: LayerTreeModel
    tree_view: QTreeView
    concepts: ConceptsView


def lay_out(window) -> None:
    """Every widget of `window` (a QMainWindow), its docks and tabs; `window.views` is what the
    controllers get."""
    window.setAcceptDrops(True)
    bar = window.addToolBar("Run")
    bar.setObjectName("toolbar")
    window.model_combo = ModelCombo()
    window.weights_combo = WeightsCombo()
    window.input_combo = searchable(QComboBox())
    window.input_combo.setMinimumContentsLength(12)
    for name in list_samples():
        window.input_combo.addItem(f"sample:{name}")
    window.device_combo = DeviceCombo()
    window.target_combo = TargetCombo()
    window.auto_run = QCheckBox("Auto-run")
    window.auto_run.setChecked(True)
    for label, widget in (("Model", window.model_combo), ("Weights", window.weights_combo),
                          ("Input", window.input_combo), ("Device", window.device_combo),
                          ("Target", window.target_combo)):
        bar.addWidget(QLabel(f" {label} "))
        bar.addWidget(widget)
    window.prompt_box = PromptBox()  # shown for an image-text model only (a toolbar shows its actions)
    window.prompt_actions = (bar.addWidget(QLabel(" Prompt ")), bar.addWidget(window.prompt_box))
    for action in window.prompt_actions:
        action.setVisible(False)
    window.run_action = QAction("Run", window, shortcut=QKeySequence("F5"))
    window.run_action.setToolTip("Run forward and backward (F5)")
    window.cancel_action = QAction("Cancel", window, shortcut=QKeySequence("Esc"))
    window.cancel_action.setEnabled(False)
    bar.addSeparator()
    for action in (window.run_action, window.cancel_action):
        bar.addAction(action)
    bar.addWidget(window.auto_run)

    window.layer_model = LayerTreeModel(window)
    window.tree_view = QTreeView()
    window.filter_box = LayerFilterBox(window.layer_model, window.tree_view)
    window.proxy = window.filter_box.proxy
    window.tree_view.setUniformRowHeights(True)
    window.tree_view.setContextMenuPolicy(Qt.CustomContextMenu)
    window.modules_dock = add_dock(window, "Modules", window.filter_box, Qt.LeftDockWidgetArea)

    window.layer_combo = content_free(searchable(QComboBox()), 20)  # hundreds of layers: type part of a name
    completes(window.layer_combo, lambda text: window.statusBar().showMessage(text, 10_000))
    window.activation_panel = TensorPanel("Activation", diverging=False)
    window.gradient_panel = TensorPanel("Gradient", diverging=True)
    center = QWidget()
    center_layout = QVBoxLayout(center)
    window.grad_site_combo = QComboBox()
    window.grad_site_combo.addItems(list(GRADIENT_SITES))
    head = QHBoxLayout()
    head.addWidget(QLabel("Layer"))
    head.addWidget(window.layer_combo, 1)
    head.addWidget(QLabel("Gradient"))
    head.addWidget(window.grad_site_combo)
    center_layout.addLayout(head)
    split = QSplitter(Qt.Horizontal)
    split.addWidget(window.activation_panel)
    split.addWidget(window.gradient_panel)
    center_layout.addWidget(split, 1)
    compare, attribution = CompareView(), AttributionView()
    flow, stats, graph = GradientFlowView(), StatsTable(), GraphTab()
    window.tabs = QTabWidget()
    window.tab_views = dict(zip((center, graph, compare, attribution, flow, stats), (name for name, _ in TABS)))
    for widget, (_name, title) in zip(window.tab_views, TABS):
        window.tabs.addTab(widget, title)
    window.banner = MessageBanner()
    middle = QWidget()
    middle_layout = QVBoxLayout(middle)
    middle_layout.setContentsMargins(0, 0, 0, 0)
    middle_layout.addWidget(window.banner)
    middle_layout.addWidget(window.tabs, 1)
    window.setCentralWidget(middle)

    window.input_view = InputView()
    window.predictions = PredictionsView()
    window.folder_bar = FolderBar()
    window.live_bar = LiveBar()
    side = QWidget()
    side_layout = QVBoxLayout(side)
    side_layout.setContentsMargins(2, 2, 2, 2)
    side_layout.addWidget(window.folder_bar)
    side_layout.addWidget(window.live_bar)
    side_layout.addWidget(window.input_view)
    side_layout.addWidget(QLabel("<b>Predictions</b>"))
    side_layout.addWidget(window.predictions)
    window.side_dock = add_dock(window, "Predictions", side, Qt.RightDockWidgetArea, scroll=True,
                                name="Input_and_predictions")  # its name before: a saved layout still places it
    window.hook_log = HookLog()
    window.log_dock = add_dock(window, "Hook log", window.hook_log, Qt.BottomDockWidgetArea)
    window.resizeDocks([window.log_dock], [110], Qt.Vertical)
    edits_panel, atlas_view = EditsPanel(), AtlasView()
    window.edits_dock = add_dock(window, "Edits", edits_panel, Qt.RightDockWidgetArea, scroll=True)
    window.atlas_dock = add_dock(window, "Atlas", atlas_view, Qt.RightDockWidgetArea)
    concepts = ConceptsView()
    window.concepts_dock = add_dock(window, "Concepts", concepts, Qt.RightDockWidgetArea)  # its splitter fits it
    window.views = Views(window.activation_panel, window.gradient_panel, compare, attribution, flow, stats, atlas_view,
                       edits_panel, graph, window.layer_model, window.tree_view, concepts)
    window.run_status = RunStatus(window.statusBar())
    fit_to_screen(window)  # inside the screen it opens on, title bar and status bar included


def dock_tabs_width(window) -> int:
    """The width the window's tabbed docks need for every tab's title whole (Qt cuts a title short, "E…", in a
    column narrower than its tabs)."""
    return max((bar.sizeHint().width() for bar in window.findChildren(QTabBar, options=Qt.FindDirectChildrenOnly)),
               default=0)


def add_dock(window, title: str, widget: QWidget, area, scroll: bool = False, name: str = "") -> QDockWidget:
    """A dock; with `scroll`, its content scrolls rather than forcing the window taller than the screen. `name`:
    what a saved layout calls it (its title, spaces as _, unless given)."""
    dock = QDockWidget(title, window)
    dock.setObjectName(name or title.replace(" ", "_"))
    if scroll:
        area_widget = QScrollArea()
        area_widget.setWidgetResizable(True)
        area_widget.setFrameShape(QScrollArea.NoFrame)
        area_widget.setWidget(widget)
        widget = area_widget
    dock.setWidget(widget)
    window.addDockWidget(area, dock)
    return dock
