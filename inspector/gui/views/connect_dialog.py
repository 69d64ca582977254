"""File > Connect to engine…: the URL of a `network-inspector serve` and its token file (or back to the engine in
this process). What cannot be used is said in one line in the dialog, which stays open."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit

from inspector.gui.common import file_dialogs


def engine_problem(url: str, token_file: str) -> str:
    """One line when `url` and `token_file` cannot be used ("" when they can; an empty URL: this process)."""
    if not url:
        return "Give the engine's address, ws://HOST:PORT." if token_file else ""
    if not url.startswith(("ws://", "wss://")) or len(url.split("://", 1)[1]) == 0:
        return f"The engine's address is ws://HOST:PORT or wss://HOST:PORT, not {url!r}."
    if token_file and not Path(token_file).expanduser().is_file():
        return f"No token file at {token_file}."
    return ""


class ConnectDialog(QDialog):
    """`url` and `token_file` once accepted ("" and None: the engine in this process)."""

    def __init__(self, url: str = "", token_file: str = "", parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Connect to engine")
        self.address = QLineEdit(url)
        self.address.setPlaceholderText("ws://127.0.0.1:8765 (empty: the engine in this process)")
        self.token = QLineEdit(token_file)
        self.token.setPlaceholderText("the server's token file (empty: $NETWORK_INSPECTOR_TOKEN, else the default)")
        self.said = QLabel()
        self.said.setWordWrap(True)
        self.said.setStyleSheet("color: #d04040;")
        form = QFormLayout(self)
        form.addRow(QLabel("The address <b>network-inspector serve</b> printed (ws://HOST:PORT, through an ssh tunnel "
                           "ws://127.0.0.1:PORT) and its token file: the window reopens on that engine.",
                           wordWrap=True))
        form.addRow("Address", self.address)
        file_dialogs.add_folder_rows(form, (("Token file", self.token, self._browse_token),))
        form.addRow(self.said)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        buttons.button(QDialogButtonBox.Ok).setText("Connect")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.url, self.token_file = "", None
        self.resize(560, self.sizeHint().height())

    def _browse_token(self) -> None:
        path = file_dialogs.open_file(self, "engine-token", "The server's token file")
        if path:
            self.token.setText(path)

    def accept(self) -> None:
        url, token = self.address.text().strip(), self.token.text().strip()
        problem = engine_problem(url, token)
        if problem:
            self.said.setText(problem)
            return
        self.url, self.token_file = url, token or None
        super().accept()
