"""The module tree's filter: a regular expression on name, path or type, or the CLI's `type:Conv2d`.

A pattern that is not a valid regular expression says so under the box (the tree then
shows everything) instead of silently matching nothing.
"""

from __future__ import annotations

import fnmatch

from PySide6.QtCore import QEvent, QModelIndex, QObject, QRegularExpression, QSortFilterProxyModel, Qt, QTimer
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QLabel, QLineEdit, QStyle, QTreeView, QVBoxLayout, QWidget

SHAPE = 2  # the tree's Output shape column (views.layer_model.COLUMNS)
CANDIDATES = 3  # fit_columns measures this many cells a column, those whose text is widest


class LayerFilterProxy(QSortFilterProxyModel):
    """Keeps modules whose name, full path or type match; ancestors of a match stay visible."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setRecursiveFilteringEnabled(True)
        self.type_glob: str | None = None
        self.regex = QRegularExpression()

    def set_pattern(self, text: str) -> str:
        """Filter by `text`; returns a message for the user ('' when the pattern is fine)."""
        text = text.strip()
        message = ""
        changing = hasattr(self, "beginFilterChange")  # Qt >= 6.10; invalidateFilter() before
        if changing:
            self.beginFilterChange()
        self.type_glob, self.regex = None, QRegularExpression()
        if text.startswith("type:"):
            self.type_glob = text[5:].strip() or "*"
        elif text:
            regex = QRegularExpression(text, QRegularExpression.CaseInsensitiveOption)
            if regex.isValid():
                self.regex = regex
            else:
                message = (f"Not a valid pattern: {regex.errorString()} at character "
                           f"{regex.patternErrorOffset() + 1}. Showing every module.")
        self.endFilterChange() if changing else self.invalidateFilter()
        return message

    def filterAcceptsRow(self, row: int, parent: QModelIndex) -> bool:
        source = self.sourceModel()
        layer = source._layers[source.index(row, 0, parent).internalId()]
        if self.type_glob is not None:
            return fnmatch.fnmatchcase(layer.type_name, self.type_glob)
        if not self.regex.pattern():
            return True
        return any(self.regex.match(text).hasMatch() for text in (layer.name, layer.path, layer.type_name))


class WidthWatch(QObject):
    """Calls `changed` when the width of the widget it watches changes (a dock's splitter dragged, a dock beside it
    widened). A child of the watched widget's parent, not the box's own event filter: a Python override called
    while the box is being destroyed crashed."""

    def __init__(self, parent, changed) -> None:
        super().__init__(parent)
        self.changed = changed

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Resize and event.size().width() != event.oldSize().width():
            self.changed()
        return False


class LayerFilterBox(QWidget):
    """Filter box, its message line and the module tree view."""

    def __init__(self, layer_model, tree_view: QTreeView, parent=None) -> None:
        super().__init__(parent)
        self.proxy = LayerFilterProxy(self)
        self.proxy.setSourceModel(layer_model)
        self.tree_view = tree_view
        tree_view.setModel(self.proxy)
        self.edit = QLineEdit(placeholderText="Filter: name, path or type (regex), or type:Conv2d")
        self.edit.setClearButtonEnabled(True)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #b3261e;")
        self.message.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.edit)
        layout.addWidget(self.message)
        layout.addWidget(tree_view)
        self.edit.textChanged.connect(self.set_pattern)
        self.widths: list[int] = []  # Module, Type, Output shape: the widths their cells and headers want
        self.width_watch = WidthWatch(tree_view, self.share_room)
        tree_view.viewport().installEventFilter(self.width_watch)
        self._fit_due = False
        tree_view.expanded.connect(self._on_expanded)

    def fit_columns(self) -> None:
        """Module, Type and Output shape in view at the dock's width, measured again (a model loaded, rows shown
        or hidden): `share_room`."""
        self._fit_due = False  # a fit asked for by rows expanded before this one is this one
        tree = self.tree_view
        header = tree.header()
        tree.doItemsLayout()  # the rows of the new model: whether they need a scroll bar
        self.widths = [max(width, header.sectionSizeHint(col)) for col, width in enumerate(self.content_widths())]
        self.share_room()

    def _on_expanded(self) -> None:
        """Deeper names shown: each whole. Measured once the tree's layout is done (expanded is said from inside
        it, where a layout asked again corrupted the tree's rows)."""
        if not self._fit_due:
            self._fit_due = True
            QTimer.singleShot(0, self, self._fit_after_expanding)

    def _fit_after_expanding(self) -> None:
        if self._fit_due:  # not measured since (the window fits them as a model loads, after expanding its tree)
            self.fit_columns()

    def share_room(self) -> None:
        """The columns' widths at the tree's width now, from the widths last measured: every name and output shape
        whole (the names are what a row is found by, the shapes what the tree is read for) and every header; the
        type gets what they leave, at least its header, and a type cut short ends in an ellipsis (the row's
        tooltip has it whole: path, type, output). A dock too narrow for names, shapes and the Type header
        scrolls sideways rather than cut a name ("co…" was left of `conv1` in a narrowed dock)."""
        if not self.widths:
            return
        tree = self.tree_view
        room = tree.viewport().width()
        bar = tree.verticalScrollBar()
        if bar.maximum() > 0 and not bar.isVisible():  # it takes its width from the viewport once shown
            room -= tree.style().pixelMetric(QStyle.PM_ScrollBarExtent, None, tree)
        name, kind, shape = self.widths[0], self.widths[1], self.widths[SHAPE]
        kind = max(tree.header().sectionSizeHint(1), min(kind, room - name - shape))
        for col, width in ((0, name), (1, kind), (SHAPE, shape)):
            tree.setColumnWidth(col, width)

    def content_widths(self, measured: int = CANDIDATES) -> list[int]:
        """Per column, the width of its widest cell among the rows shown, as QTreeView.sizeHintForColumn has it
        (the delegate's size hint, and the indentation in the tree's column), without asking the delegate for
        every cell (about ten data() calls each: 30-40 ms of a demo launch's GUI thread): the `measured` cells
        of each column whose text is widest in the font's metrics are measured."""
        tree, proxy = self.tree_view, self.proxy
        source = proxy.sourceModel()
        metrics = tree.fontMetrics()
        step, root = tree.indentation(), 1 if tree.rootIsDecorated() else 0
        branches = tree.header().logicalIndex(tree.treePosition())  # the column indented by depth
        rows = []  # (proxy index of column 0, its depth) of every row shown
        stack = [(QModelIndex(), -1)]
        while stack:
            parent, level = stack.pop()
            for row in range(proxy.rowCount(parent)):
                index = proxy.index(row, 0, parent)
                rows.append((index, level + 1))
                if tree.isExpanded(index):
                    stack.append((index, level + 1))
        sources = [(source.data(proxy.mapToSource(index), Qt.FontRole), proxy.mapToSource(index).internalId())
                   for index, _level in rows]
        widths = []
        for col in range(proxy.columnCount()):
            guess = []
            for (index, level), (font, i) in zip(rows, sources):
                indent = (level + root) * step if col == branches else 0
                text = source.text(i, col)
                width = (QFontMetrics(font) if font is not None and col == 0 else metrics).horizontalAdvance(text)
                guess.append((width + indent, index, indent))
            guess.sort(key=lambda g: -g[0])
            widths.append(max((tree.sizeHintForIndex(index.siblingAtColumn(col)).width() + indent
                               for _w, index, indent in guess[:measured]), default=-1))
        return widths

    def set_pattern(self, text: str) -> None:
        message = self.proxy.set_pattern(text)
        self.message.setText(message)
        self.message.setVisible(bool(message))
        if text and not message:
            self.tree_view.expandAll()
            self.fit_columns()
