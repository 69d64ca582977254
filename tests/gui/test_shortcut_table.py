"""Issue 41, item 13: F1's table names every key the window answers to (Ctrl+Z, Undo, was missing though the
docs (docs/tasks/edit-and-compare.md, then the README) and the Undo button's tooltip name it)."""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QAbstractButton

from inspector.gui.menus import SHORTCUTS


def test_every_shortcut_of_the_window_is_in_the_f1_table(window):
    qt_names = {"Page Down": "PgDown", "Page Up": "PgUp"}  # the table says what the key caps say
    listed = {qt_names.get(part.strip(), part.strip()) for keys, _ in SHORTCUTS for part in keys.split("/")}
    bound = set()
    for widget in (*window.findChildren(QAction), *window.findChildren(QAbstractButton)):
        for sequence in (widget.shortcuts() if isinstance(widget, QAction) else [widget.shortcut()]):
            text = sequence.toString(QKeySequence.PortableText)
            if text:
                bound.add(text)
    assert bound, "the window binds no keys?"
    assert bound <= listed, sorted(bound - listed)
    assert ("Ctrl+Z", "Undo the last change to the edits") in SHORTCUTS
