"""A Qt item model that adapts the core's LayerTree; it holds the ticks, never the layers.

Every module has its own tick. A parent shows Checked when it and every module below it
are ticked, PartiallyChecked when some are; clicking a parent ticks or unticks its whole
subtree. The ticked set is exactly what gets hooked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QAbstractItemModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QFont

if TYPE_CHECKING:
    from inspector.core.sources.layers import LayerTree

COLUMNS = ("Module", "Type", "Output shape", "Parameters", "Calls")
# Roles and flags as plain ints: comparing with PySide6's enums costs ~2.7 us each, and a view asks
# data() for ~10 roles per cell (resnet50's tree: 2,200 calls, 31 ms of the GUI thread when it loaded)
_DISPLAY, _CHECK, _BACKGROUND, _FONT, _FOREGROUND, _TOOLTIP, _USER = (
    r.value for r in (Qt.DisplayRole, Qt.CheckStateRole, Qt.BackgroundRole, Qt.FontRole, Qt.ForegroundRole,
                      Qt.ToolTipRole, Qt.UserRole))
_ROW_FLAGS = Qt.ItemIsEnabled | Qt.ItemIsSelectable
_TICK_FLAGS = _ROW_FLAGS | Qt.ItemIsUserCheckable
#: Relative L2 difference (upper bound) -> row colour, for layers above the threshold.
DIVERGENCE_COLOURS = ((1e-2, QColor(255, 244, 190)), (1e-1, QColor(255, 214, 140)), (1.0, QColor(255, 176, 110)),
                      (float("inf"), QColor(240, 130, 100)))


class LayerTreeModel(QAbstractItemModel):
    """Signals
    -------
    sigTicksChanged(object): the set of ticked paths after a change.
    """

    sigTicksChanged = Signal(object)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._tree: LayerTree | None = None
        self._ran = False
        self._paths: list[str] = []
        self._parent: list[int] = []
        self._children: list[list[int]] = []
        self._row: list[int] = []
        self._subtree: list[range] = []  # named_modules order is depth-first: a subtree is a range
        self._ticked: set[str] = set()
        self._highlight: str | None = None
        self._divergence: dict[str, float] = {}  # path -> relative L2 difference from a second model
        self._threshold = 0.0
        self._first_divergent: str | None = None

    # -- data ----------------------------------------------------------------------
    def set_tree(self, tree: LayerTree, ticked: set[str] | None = None) -> None:
        self.beginResetModel()
        self._tree = tree
        self._ran = any(l.calls for l in tree.layers)  # built with a forward: calls are known
        layers = [l for l in tree.layers if l.path]  # the model itself is the invisible root
        self._paths = [l.path for l in layers]
        index_of = {p: i for i, p in enumerate(self._paths)}
        self._parent, self._children, self._row = [], [[] for _ in layers], []
        self._root_children: list[int] = []
        for i, path in enumerate(self._paths):
            parent_path = path.rsplit(".", 1)[0] if "." in path else ""
            parent = index_of.get(parent_path, -1)
            while parent == -1 and "." in parent_path:  # a gap (module under an unlisted name)
                parent_path = parent_path.rsplit(".", 1)[0]
                parent = index_of.get(parent_path, -1)
            siblings = self._children[parent] if parent >= 0 else self._root_children
            self._parent.append(parent)
            self._row.append(len(siblings))
            siblings.append(i)
        self._subtree = []
        for i, path in enumerate(self._paths):
            end = i + 1
            while end < len(self._paths) and self._paths[end].startswith(path + "."):
                end += 1
            self._subtree.append(range(i, end))
        self._layers = layers
        self._ticked = {p for p in (ticked or set()) if p in index_of}
        self.endResetModel()
        self.sigTicksChanged.emit(set(self._ticked))

    def ticked(self) -> list[str]:
        """Ticked paths in model order."""
        return [p for p in self._paths if p in self._ticked]

    def set_ticked(self, paths) -> None:
        known = set(self._paths)
        wanted = {p for p in paths if p in known}
        if wanted == self._ticked:
            return
        self._ticked = wanted
        if self._paths:
            self.dataChanged.emit(self.index(0, 0), self.index(self.rowCount() - 1, 0), [Qt.CheckStateRole])
            self._emit_all()
        self.sigTicksChanged.emit(set(self._ticked))

    def paths(self) -> list[str]:
        return list(self._paths)

    def set_highlight(self, path: str | None) -> None:
        """Mark one module (e.g. where NaN/Inf first appears); None clears the mark."""
        old, self._highlight = self._highlight, path
        for p in {old, path} - {None}:
            index = self.index_of(p)
            if index.isValid():
                self.dataChanged.emit(index, self.index(index.row(), len(COLUMNS) - 1, index.parent()))

    def set_divergence(self, levels: dict[str, float] | None, threshold: float = 0.0,
                       first: str | None = None) -> None:
        """Mark modules by how far they diverge from a second model (the largest relative L2 difference
        of their activations), the first divergent one in bold; None clears the marks. Marks that
        stay as they were repaint nothing (every result sets them; a live video gives many)."""
        marks = (dict(levels or {}), threshold if levels else 0.0, first if levels else None)
        if marks == (self._divergence, self._threshold, self._first_divergent):
            return
        self._divergence, self._threshold, self._first_divergent = marks
        if self._paths:
            for i in range(len(self._paths)):  # rows of every depth
                self.dataChanged.emit(self.createIndex(self._row[i], 0, i),
                                      self.createIndex(self._row[i], len(COLUMNS) - 1, i))

    def divergence_colour(self, path: str) -> QColor | None:
        """None at or below the threshold; pale yellow to red as the difference grows (log scale)."""
        value = self._divergence.get(path)
        if value is None or not value > self._threshold:
            return None if value is None or value == value else QColor(255, 120, 120)
        return next(colour for bound, colour in DIVERGENCE_COLOURS if value <= bound)

    def path_of(self, index: QModelIndex) -> str | None:
        return self._paths[index.internalId()] if index.isValid() else None

    def index_of(self, path: str) -> QModelIndex:
        try:
            i = self._paths.index(path)
        except ValueError:
            return QModelIndex()
        return self.createIndex(self._row[i], 0, i)

    # -- Qt model API -------------------------------------------------------------
    def index(self, row, column, parent=QModelIndex()):
        kids = self._children[parent.internalId()] if parent.isValid() else getattr(self, "_root_children", [])
        if 0 <= row < len(kids) and 0 <= column < len(COLUMNS):
            return self.createIndex(row, column, kids[row])
        return QModelIndex()

    def parent(self, index=QModelIndex()):
        if not index.isValid():
            return QModelIndex()
        p = self._parent[index.internalId()]
        return QModelIndex() if p < 0 else self.createIndex(self._row[p], 0, p)

    def rowCount(self, parent=QModelIndex()):
        if parent.isValid():
            return len(self._children[parent.internalId()]) if parent.column() == 0 else 0
        return len(getattr(self, "_root_children", []))

    def columnCount(self, parent=QModelIndex()):
        return len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if orientation == Qt.Horizontal and role == Qt.DisplayRole:
            return COLUMNS[section]
        return None

    def flags(self, index):
        if not index.isValid():
            return Qt.NoItemFlags
        return _TICK_FLAGS if index.column() == 0 else _ROW_FLAGS

    def data(self, index, role=_DISPLAY):
        if not index.isValid():
            return None
        role = role if type(role) is int else role.value
        i, col = index.internalId(), index.column()
        layer = self._layers[i]
        if role == _DISPLAY:
            return self.text(i, col)
        if role == _CHECK and col == 0:
            return self._check_state(i)
        if role == _BACKGROUND and self._highlight == layer.path:
            return QColor(255, 170, 170)
        if role == _BACKGROUND and self._divergence:
            return self.divergence_colour(layer.path)
        if role == _FONT and layer.path == self._first_divergent and col == 0:
            font = QFont()
            font.setBold(True)
            return font
        if role == _FOREGROUND and self._idle(layer):
            return QColor(150, 150, 150)
        if role == _TOOLTIP:
            if self._idle(layer):
                return (f"{layer.path} ({layer.type_name}) is never called in a forward pass (its parent uses "
                        f"its weights directly, as nn.MultiheadAttention does with out_proj): nothing to capture; "
                        f"left out of 'all leaves'.")
            value = self._divergence.get(layer.path)
            if value is not None:
                first = "; the first divergent layer" if layer.path == self._first_divergent else ""
                return f"{layer.path} ({layer.type_name}): differs from the second model by {value:.3g} (relative L2){first}"
            shape = " × ".join("x".join(map(str, s)) for s in layer.output_shapes[:1]) if layer.output_shapes else ""
            more = [f"output {shape}"] if shape else []
            if layer.calls:
                more.append(f"called {layer.calls}x per forward")
            return f"{layer.path} ({layer.type_name})" + (f": {', '.join(more)}" if more else "")
        if role == _USER:
            return layer.path

        return None

    def text(self, i: int, col: int) -> str:
        """What row `i` (its index's internalId) shows in column `col`."""
        layer = self._layers[i]
        if col == 0:
            return layer.name
        if col == 1:
            return layer.type_name
        if col == 2:
            return ", ".join("×".join(map(str, s)) for s in layer.output_shapes)
        if col == 3:
            return f"{layer.parameters:,}"
        return str(layer.calls) if layer.calls != 1 else "1"

    def _idle(self, layer) -> bool:
        return layer.is_leaf and not layer.calls and self._ran

    def setData(self, index, value, role=Qt.EditRole):
        if role != Qt.CheckStateRole or not index.isValid() or index.column() != 0:
            return False
        i = index.internalId()
        state = Qt.CheckState(value) if not isinstance(value, Qt.CheckState) else value
        # A view sends Checked for an unticked or partial box, Unchecked for a ticked one;
        # honour the value so programmatic setData means what it says. A parent's whole
        # subtree follows.
        self.set_subtree(self._paths[i], state == Qt.Checked)
        return True

    def set_subtree(self, path: str, tick: bool, only_self: bool = False) -> None:
        i = self._paths.index(path)
        span = range(i, i + 1) if only_self else self._subtree[i]
        for j in span:
            (self._ticked.add if tick else self._ticked.discard)(self._paths[j])
        self._emit_range(span)
        self.sigTicksChanged.emit(set(self._ticked))

    def _emit_range(self, span: range) -> None:
        nodes = set(span)
        p = self._parent[span[0]]
        while p >= 0:
            nodes.add(p)
            p = self._parent[p]
        for j in nodes:
            idx = self.createIndex(self._row[j], 0, j)
            self.dataChanged.emit(idx, idx, [Qt.CheckStateRole])

    def _emit_all(self) -> None:
        if self._paths:
            self._emit_range(range(0, len(self._paths)))

    def _check_state(self, i: int):
        span = self._subtree[i]
        if len(span) == 1:
            return Qt.Checked if self._paths[i] in self._ticked else Qt.Unchecked
        count = sum(1 for j in span if self._paths[j] in self._ticked)
        if count == len(span):
            return Qt.Checked
        return Qt.PartiallyChecked if count else Qt.Unchecked

    # -- bulk ----------------------------------------------------------------------
    def tick_type(self, type_name: str, tick: bool = True) -> None:
        paths = {l.path for l in self._layers if l.type_name == type_name}
        self.set_ticked(self._ticked | paths if tick else self._ticked - paths)

    def tick_leaves(self) -> None:
        """Every leaf that runs (the core's rule: never-called leaves are left out)."""
        self.set_ticked(set(self._tree.leaves))
