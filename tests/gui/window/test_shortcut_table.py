"""Issue 41, item 13: F1's table names every key the window answers to (Ctrl+Z, Undo, was missing though the
docs (docs/tasks/edit-and-compare.md, then the README) and the Undo button's tooltip name it); issue 52 item 7: and
a tab's own keys (the Graph tab's Ctrl+F was missing)."""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QAbstractButton

from inspector.gui.window.menus import SHORTCUTS


def test_every_shortcut_of_the_window_is_in_the_f1_table(window):
    qt_names = {"Page Down": "PgDown", "Page Up": "PgUp"}  # the table says what the key caps say
    listed = {qt_names.get(part.strip(), part.strip()) for keys, _ in SHORTCUTS for part in keys.split("/")}
    bound = set()
    shortcuts = window.findChildren(QShortcut)  # a tab's own keys (the Graph tab's Ctrl+F was not listed)
    assert shortcuts
    for widget in (*window.findChildren(QAction), *window.findChildren(QAbstractButton), *shortcuts):
        for sequence in (widget.shortcuts() if isinstance(widget, QAction) else [widget.key()]
                         if isinstance(widget, QShortcut) else [widget.shortcut()]):
            text = sequence.toString(QKeySequence.PortableText)
            if text:
                bound.add(text)
    assert bound, "the window binds no keys?"
    assert bound <= listed, sorted(bound - listed)
    assert ("Ctrl+Z", "Undo the last change to the edits") in SHORTCUTS
