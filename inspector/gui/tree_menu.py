"""The module tree's context menu: tick by type, all leaves or none, add an edit at a module."""

from __future__ import annotations

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
