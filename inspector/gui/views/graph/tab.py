"""The Graph tab: a line naming the graph (and what it could not see), a search box, the canvas with its overview,
and one line that says what is happening (recording, laying out) or why there is no graph.

Signals
-------
sigSearch(str, int): find the next (+1) match of the text typed (Enter).
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QSizePolicy, QVBoxLayout, QWidget

from .scene import GraphScene
from .view import GraphView

HELP = ("Wheel: zoom · drag: pan · double-click: fit · click a node: show its layer · its box: tick it · "
        "+/-: open or close · right-click: menu")


class GraphTab(QWidget):
    sigSearch = Signal(str, int)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._said = None  # what the status line says (text, failed, the hint)
        self.scene = GraphScene(self)
        self.view = GraphView(self.scene)
        self.caption = QLabel("")
        self.caption.setWordWrap(True)
        self.caption.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.caption.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Find: a name, or type:Conv2d")
        self.search.setToolTip("Ctrl+F. A part of a node's name (path or op), or type:NAME for a module type or op "
                               "(type:Conv2d, type:add). Enter: the next match, centred and selected (a match "
                               "inside a closed group opens it).")
        self.search.setClearButtonEnabled(True)
        self.search.setMinimumWidth(200)
        self.search.returnPressed.connect(lambda: self.sigSearch.emit(self.search.text(), 1))
        self.search.textChanged.connect(lambda _t: self.found.setText(""))  # the count was of the text before
        find = QShortcut(QKeySequence.Find, self, context=Qt.WidgetWithChildrenShortcut)  # Ctrl+F on the tab
        find.activated.connect(lambda: (self.search.setFocus(), self.search.selectAll()))
        self.found = QLabel("")
        self.found.setMinimumWidth(70)
        self.fit = QPushButton("Fit")
        self.fit.setToolTip("The whole graph in view (or double-click on empty space)")
        self.fit.clicked.connect(self.view.fit_all)
        self.status = QLabel("Run the model to see its graph.")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.status.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.status.setStyleSheet("QLabel { color: #5a5f69; }")
        self.count = QLabel("")
        head = QHBoxLayout()
        head.addWidget(self.count, 1)
        head.addWidget(self.search)
        head.addWidget(self.found)
        head.addWidget(self.fit)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(head)
        layout.addWidget(self.caption)
        layout.addWidget(self.status)
        layout.addWidget(self.view, 1)

    # -- what the controller says ------------------------------------------------------------
    def say(self, text: str, failed: bool = False) -> None:
        """One line over the canvas: what is happening, or (failed) why there is no graph; with a graph drawn and
        nothing to say, how to use it."""
        hint = not text and self.scene.layout is not None
        if (text, failed, hint) == self._said:
            return  # unchanged: no new style, no new layout of the tab
        self._said = (text, failed, hint)
        self.status.setText(HELP if hint else text)
        colour = "#b00020" if failed else "#5a5f69"
        self.status.setStyleSheet(f"QLabel {{ color: {colour}; }}" if not hint else
                                  "QLabel { color: #7a808a; font-size: 10px; }")
        self.status.setVisible(bool(text) or hint)

    def clear(self, text: str = "", failed: bool = False) -> None:
        self.scene.empty()
        self.view.overview.follow()
        self.caption.setText("")
        self.count.setText("")
        self.found.setText("")
        self.say(text, failed)

    def set_caption(self, graph, shown: int) -> None:
        """The graph's caption (data-dependent graphs say so), how many of its nodes are drawn, its notes."""
        notes = " ".join(graph.notes)
        self.count.setText(f"{len(graph.nodes)} nodes" if shown >= len(graph.nodes) else
                           f"{shown} of {len(graph.nodes)} nodes drawn (+ opens a group)")
        head, _, rest = (escape(t) for t in graph.caption.partition(" ("))
        self.caption.setText(f"<b>{head}</b>" + (f" ({rest}" if rest else "") + (f" · {escape(notes)}" if notes else ""))
        self.caption.setToolTip(graph.caption + ("\n" + "\n".join(graph.notes) if graph.notes else ""))
