"""Starting the desktop app."""

from __future__ import annotations

import sys


def run_app(argv: list[str] | None = None) -> int:
    from PySide6.QtWidgets import QApplication

    from .main_window import MainWindow

    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    app.setApplicationName("Network Inspector")
    app.setOrganizationName("NetworkInspector")
    window = MainWindow()
    window.show()
    code = app.exec()
    return int(code)
