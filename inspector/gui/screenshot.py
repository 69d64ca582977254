"""Regenerate the README screenshot: `python -m inspector.gui.screenshot [OUT.png]`.

Opens the app on the demo model with a sample, waits for the first run, ticks the
residual block, and saves a picture of the window. Runs offscreen; settings go to a
temporary folder so the user's are untouched.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    out = Path(argv[0] if argv else "resources/screenshot.png")
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    from .main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    settings = QSettings(str(Path(tempfile.mkdtemp()) / "screenshot.ini"), QSettings.IniFormat)
    settings.setValue("model/source", "demo")
    settings.setValue("input", "sample:star")
    settings.setValue("ticks/demo", '["conv1", "block.conv2", "conv3", "fc"]')
    window = MainWindow(settings=settings)
    window.resize(1500, 950)
    window.show()
    shots = {"n": 0}

    def on_result(_outcome) -> None:
        shots["n"] += 1
        if shots["n"] == 1:
            window.show_layer("block.conv2")
            QTimer.singleShot(400, save)

    def save() -> None:
        out.parent.mkdir(parents=True, exist_ok=True)
        window.grab().save(str(out))
        print(f"wrote {out}")
        window.close()
        app.quit()

    window.sigResultShown.connect(on_result)
    window.sigFailedShown.connect(lambda message: print(f"error: {message}", file=sys.stderr))
    QTimer.singleShot(120_000, app.quit)
    app.exec()
    return 0 if out.is_file() else 1


if __name__ == "__main__":
    sys.exit(main())
