"""The menu bar a desktop user expects: File, View (every dock, reset layout, layers), Attribution (Evaluate…), Help."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMessageBox

from inspector.core.storage.versions import versions as core_versions

SHORTCUTS = (
    ("F5", "Run"), ("Esc", "Cancel the run or download"), ("Ctrl+O", "Open model…"), ("Ctrl+I", "Open input…"),
    ("Ctrl+Shift+I", "Open a folder of images…"), ("Right / Page Down", "Next image in the folder"),
    ("Left / Page Up", "Previous image in the folder"),
    ("Ctrl+V", "Paste an image as the input"), ("Ctrl+S", "Save session…"), ("Ctrl+Shift+S", "Save figure…"), ("Ctrl+L", "Load session…"),
    ("Ctrl+E", "Export captures…"), ("Alt+Down / Alt+Up", "Next / previous layer"),
    ("Ctrl+Z", "Undo the last change to the edits"), ("Ctrl+F", "Graph tab: find a node (Enter: the next one)"),
    ("F1", "Keyboard shortcuts (this table)"), ("Ctrl+Q", "Quit"),
)

FIGURE_TIP = ("The figure of the tab on screen, with a caption naming the model, input and edits. Attribution: "
              "the map over the input with its colour bar, curves and settings, or every cell of Compare all, drawn "
              "from the data at the figure's own size (no controls, nothing clipped); other tabs: the view as on "
              "screen. PNG at 1-4x, or SVG.")


def _action(window, menu, text: str, slot, shortcut: str | tuple | None = None) -> QAction:
    action = QAction(text, window)
    if isinstance(shortcut, tuple):
        action.setShortcuts([QKeySequence(key) for key in shortcut])
    elif shortcut:
        action.setShortcut(QKeySequence(shortcut))
    action.triggered.connect(slot)
    menu.addAction(action)
    window.addAction(action)  # shortcuts work while the menu bar is hidden or a dock has focus
    return action


def fill_recent(window) -> None:
    """File > Open recent: the model files and inputs that ran last, newest first."""
    menu = window.recent_menu
    menu.clear()
    items = window.state.store.recent()
    for kind, path in items:
        if kind == "model":
            file, _, name = path.rpartition(":") if path.lower().rpartition(":")[0].endswith(".py") else (path, "", "")
            action = menu.addAction(f"Model: {path}")
            action.triggered.connect(lambda _c=False, f=file, n=name or None: window.open_model_file(f, n))
        else:
            action = menu.addAction(f"Input: {path}")
            action.triggered.connect(lambda _c=False, p=path: window.state.set_input(p))
    if not items:
        menu.addAction("(nothing yet)").setEnabled(False)


class EscReachesCancel(QObject):
    """Esc is Cancel wherever the focus is. A menu closed with Esc leaves the menu bar in keyboard mode, with the
    focus, and Qt's QMenuBar then takes the next Esc for itself (it accepts Esc's ShortcutOverride), so the first
    Esc after a menu cancelled nothing. While there is something to cancel, the bar lets Esc go to the action."""

    def __init__(self, cancel: QAction, bar) -> None:
        super().__init__(bar)
        self.cancel = cancel
        bar.installEventFilter(self)

    def eventFilter(self, _watched, event) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.ShortcutOverride and event.key() == Qt.Key_Escape and self.cancel.isEnabled():
            event.ignore()  # not the bar's: the shortcut map gives it to Cancel
            return True
        return False


def build_menus(window) -> None:
    bar = window.menuBar()
    EscReachesCancel(window.cancel_action, bar)
    file = bar.addMenu("&File")
    window.open_model_action = _action(window, file, "Open model…", window.on_open_model, "Ctrl+O")
    _action(window, file, "Open Hugging Face model folder…", window.on_open_hf_folder)
    window.open_input_action = _action(window, file, "Open input…", window.on_open_input, "Ctrl+I")
    window.open_folder_action = _action(window, file, "Open folder of images…", window.on_open_folder,
                                        "Ctrl+Shift+I")
    window.open_video_action = _action(window, file, "Open video file…", window.on_open_video)
    window.open_camera_action = _action(window, file, "Open camera…", window.on_open_camera)
    _action(window, file, "Open channel atlas…", window.atlas.open_dialog)
    _action(window, file, "Open concepts…", window.concepts.open_dialog)
    _action(window, file, "Build concepts…", window.concepts.build_dialog)
    window.paste_action = _action(window, file, "Paste image", window.paste_image, QKeySequence.Paste)
    window.recent_menu = file.addMenu("Open recent")
    window.recent_menu.aboutToShow.connect(lambda: fill_recent(window))
    file.addSeparator()
    _action(window, file, "Save session…", window.edits.save_dialog, "Ctrl+S")
    _action(window, file, "Load session…", window.edits.load_dialog, "Ctrl+L")
    file.addSeparator()
    _action(window, file, "Export captures (.npz + manifest)…", window.analysis.export_dialog, "Ctrl+E")
    window.save_figure_action = _action(window, file, "Save figure (PNG at a scale, or SVG; captioned)…",
                                        window.save_figure_dialog, "Ctrl+Shift+S")
    window.save_figure_action.setToolTip(FIGURE_TIP)
    window.save_figure_action.setStatusTip(FIGURE_TIP)
    file.setToolTipsVisible(True)
    file.addSeparator()
    window.connect_action = _action(window, file, "Connect to engine…", window.connect_dialog)
    window.connect_action.setStatusTip("Run on the engine of `network-inspector serve` on another machine (or back "
                                       "on this one's)")
    file.addSeparator()
    _action(window, file, "Quit", window.close, "Ctrl+Q")

    view = bar.addMenu("&View")
    for dock in window.findChildren(QDockWidget):
        view.addAction(dock.toggleViewAction())
    view.addSeparator()
    _action(window, view, "Next layer", lambda: window.step_layer(1), "Alt+Down")
    _action(window, view, "Previous layer", lambda: window.step_layer(-1), "Alt+Up")
    _action(window, view, "Token grid…", window.ask_token_grid)
    view.addSeparator()
    window.next_image_action = _action(window, view, "Next image in the folder", lambda: window.state.folder.step(1),
                                       ("Right", "PgDown"))
    window.previous_image_action = _action(window, view, "Previous image in the folder",
                                           lambda: window.state.folder.step(-1), ("Left", "PgUp"))
    for action in (window.next_image_action, window.previous_image_action):
        action.setEnabled(False)  # while a folder is the input
    view.addSeparator()
    _action(window, view, "Reset layout", window.reset_layout)

    attribution = bar.addMenu("&Attribution")
    _action(window, attribution, "Evaluate…", window.evaluation.run_dialog).setStatusTip(
        "Evaluate attribution methods over a folder of images (deletion, insertion, ...: the mean per method with its "
        "95 % interval), as network-inspector evaluate does")
    _action(window, attribution, "Open evaluation…", window.evaluation.open_dialog)

    help_ = bar.addMenu("&Help")
    _action(window, help_, "Keyboard shortcuts", lambda: show_shortcuts(window), "F1")
    _action(window, help_, "About Network Inspector", lambda: show_about(window))


def shortcuts_text() -> str:
    rows = "".join(f"<tr><td><b>{keys}</b>&nbsp;&nbsp;</td><td>{what}</td></tr>" for keys, what in SHORTCUTS)
    return f"<table>{rows}</table>"


def versions() -> dict[str, str]:
    """Versions of what the app runs on, named for people (torch only once the engine has loaded it)."""
    found = {**core_versions(("PySide6", "pyqtgraph")),
             **core_versions(("torch", "torchvision"), unloaded="not loaded yet")}
    names = {"inspector": "Network Inspector", "python": "Python"}
    order = ["inspector", "python", "PySide6", "pyqtgraph", "torch", "torchvision"]
    return {names.get(key, key): found[key] for key in order}


def about_text() -> str:
    rows = "".join(f"<tr><td>{k}&nbsp;&nbsp;</td><td>{v}</td></tr>" for k, v in versions().items())
    return ("<p><b>Network Inspector</b>: see inside a PyTorch network: hook modules, capture activations "
            f"and gradients, edit them live.</p><table>{rows}</table>")


def show_shortcuts(window) -> None:
    QMessageBox.information(window, "Keyboard shortcuts", shortcuts_text())


def show_about(window) -> None:
    QMessageBox.about(window, "About Network Inspector", about_text())
