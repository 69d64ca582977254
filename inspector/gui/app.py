"""Starting the desktop app."""

from __future__ import annotations

import sys


def run_app(argv: list[str] | None = None) -> int:
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from inspector.demo.paths import resources_dir

    from .main_window import MainWindow

    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    app.setApplicationName("Network Inspector")
    app.setOrganizationName("NetworkInspector")
    icon = resources_dir() / "icons" / "network-inspector.png"
    if icon.is_file():
        app.setWindowIcon(QIcon(str(icon)))
    window = MainWindow()
    window.show()
    code = app.exec()
    return int(code)
