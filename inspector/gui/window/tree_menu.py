"""The module tree's context menu (tick by type, all leaves or none, add an edit at a module), and the right press
that opens it without picking a row."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QMenu


def tree_menu(window, path: str | None) -> QMenu:
    model = window.layer_model
    menu = QMenu(window)
    if path is not None and window.loaded is not None:
        kind = window.loaded.tree.get(path).type_name
        menu.addAction(f"Tick all {kind}", lambda: model.tick_type(kind))
        menu.addAction(f"Untick all {kind}", lambda: model.tick_type(kind, False))
        menu.addAction("Tick only this module", lambda: model.set_subtree(path, True, only_self=True))
        window.edits.extend_tree_menu(menu, path)
        menu.addSeparator()
    menu.addAction("Tick all leaves", model.tick_leaves)
    menu.addAction("Tick none", lambda: model.set_ticked(set()))
    menu.addSeparator()
    menu.addAction("Expand all", window.tree_view.expandAll)
    menu.addAction("Collapse all", window.tree_view.collapseAll)
    return menu


class RightPressKeepsCurrent(QObject):
    """A right-button press on the module tree opens its menu and changes nothing: Qt would make the row under it
    current first (and so select, and once tick, that module)."""

    def __init__(self, viewport) -> None:
        super().__init__(viewport)
        viewport.installEventFilter(self)

    def eventFilter(self, _watched, event) -> bool:
        kinds = (QEvent.MouseButtonPress, QEvent.MouseButtonDblClick, QEvent.MouseButtonRelease)
        return event.type() in kinds and event.button() == Qt.RightButton
