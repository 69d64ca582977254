"""The file dialog of a window on a remote engine: the server's folders, listed by the server (`list`), inside its
data root. The folder shown (its path, editable: Enter goes there), Up, its folders and files with their sizes,
All files, the server's line (its data root, or why a folder was refused), OK and Cancel. What it shows and gives
back is `server_browsing.ServerBrowsing`; the listings come from the window's RemoteWorker (`request_listing`,
answered on sigAnswer("files", ...))."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QStyle,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
)

from .server_browsing import Row, ServerBrowsing, patterns_of


class ServerDialog(QDialog):
    """`engine`: the RemoteWorker whose server is browsed; `folders`: a folder is chosen (else a file, one that
    `filters` (Qt's filter text) offers); `start`: the server folder shown first ("": the data root)."""

    def __init__(self, engine, title: str, folders: bool, start: str = "", filters: str = "", parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"{title} (on the engine's machine)")
        self.engine, self.chosen = engine, ""
        self.browsing = ServerBrowsing(engine.request_listing, folders, patterns_of(filters))
        self._fallback = bool(start)  # a remembered folder that is gone: the data root instead
        self.path = QLineEdit()
        self.path.setPlaceholderText("a folder on the server")
        self.path.returnPressed.connect(lambda: self.browsing.open(self.path.text().strip()) or self._show())
        self.up = QPushButton("Up")
        self.up.clicked.connect(lambda: self.browsing.up() and self._show())
        self.list = QTreeWidget()
        self.list.setHeaderLabels(["Name", "Size"])
        self.list.setRootIsDecorated(False)
        self.list.setColumnWidth(0, 380)
        self.list.itemDoubleClicked.connect(self._on_double_click)
        self.every = QCheckBox("All files")
        self.every.toggled.connect(lambda on: self.browsing.set_every_file(on) or self._show())
        self.said = QLabel(" ", wordWrap=True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        self.buttons.accepted.connect(lambda: self._accept())
        self.buttons.rejected.connect(self.reject)
        top = QHBoxLayout()
        top.addWidget(self.path, 1)
        top.addWidget(self.up)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.every)
        layout.addWidget(self.said)
        layout.addWidget(self.buttons)
        self.resize(620, 460)
        engine.sigAnswer.connect(self._on_answer)
        self.finished.connect(lambda _r: engine.sigAnswer.disconnect(self._on_answer))
        self.browsing.open(start)
        self._show()

    def _on_answer(self, lane: str, _run_id: int, found) -> None:
        if lane != "files" or self.browsing.waiting is None:
            return
        self.browsing.answered(found)
        if self.browsing.listing is None and self._fallback:  # the folder remembered is gone: the data root
            self._fallback = False
            self.browsing.open("")
        self._show()

    def _show(self) -> None:
        b = self.browsing
        self.path.setText(b.waiting if b.waiting is not None else b.path)
        self.up.setEnabled(b.listing is not None and b.listing["parent"] is not None)
        self.list.clear()
        folder_icon = self.style().standardIcon(QStyle.SP_DirIcon)
        file_icon = self.style().standardIcon(QStyle.SP_FileIcon)
        for row in b.rows():
            item = QTreeWidgetItem([row.name, row.size_text()])
            item.setIcon(0, folder_icon if row.folder else file_icon)
            item.setData(0, Qt.UserRole, row)
            item.setTextAlignment(1, Qt.AlignRight | Qt.AlignVCenter)
            if b.folders and not row.folder:
                item.setFlags(item.flags() & ~Qt.ItemIsSelectable)  # shown for what the folder holds
            self.list.addTopLevelItem(item)
        self.said.setText("Listing…" if b.waiting is not None else b.said or b.where())

    def selected(self) -> Row | None:
        items = self.list.selectedItems()
        return items[0].data(0, Qt.UserRole) if items else None

    def _on_double_click(self, item: QTreeWidgetItem, _column: int) -> None:
        row = item.data(0, Qt.UserRole)
        if row.folder:
            self.browsing.open(self.browsing.child(row.name))
            self._show()
        elif not self.browsing.folders:
            self._accept(row)

    def _accept(self, row: Row | None = None) -> None:
        if self.browsing.waiting is not None:
            return  # the folder asked for is not listed yet
        chosen = self.browsing.chosen(row or self.selected())
        if not chosen:
            self.said.setText("Choose a file (double-click a folder to open it).")
            return
        self.chosen = chosen
        self.accept()

    def ask(self) -> str:
        """Shown until the user chooses (the server path) or cancels (""); deleted after."""
        try:
            return self.chosen if self.exec() == QDialog.Accepted else ""
        finally:
            self.deleteLater()
