"""The self-test's Qt steps: a mosaic panel and the main window, drawn offscreen.

PySide6 and the GUI are imported inside the steps, so importing this module needs no Qt.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from .base import APP_TIMEOUT_S, EDITS, Context, check


def _distinct_colours(path: Path) -> int:
    from PIL import Image

    with Image.open(path) as image:
        return len(set(image.convert("RGB").getdata()))


def step_mosaic(ctx: Context) -> None:
    """A TensorPanel draws a capture's mosaic offscreen; the grabbed PNG is not blank."""
    from PySide6.QtGui import QImageReader

    from inspector.gui.views.tensor_panel import TensorPanel

    app = ctx.qapp()
    check(app.platformName() == "offscreen", f"Qt platform is {app.platformName()!r}, not offscreen")
    formats = {bytes(f).decode() for f in QImageReader.supportedImageFormats()}
    check({"png", "jpeg", "ico"} <= formats, f"Qt image format plugins missing; Qt reads {sorted(formats)}")
    result = ctx.run(EDITS)
    capture = result.captures["conv1:output"]
    panel = TensorPanel("conv1:output", diverging=False)
    try:
        panel.resize(640, 520)
        panel.show()
        panel.show_capture("conv1:output", capture.array, capture.stats)
        for _ in range(5):
            app.processEvents()
        check(panel.mosaic is not None and panel.mosaic.channels == capture.array.shape[1],
              "the panel drew no mosaic")
        out = Path.cwd() / "模样-ü.png"
        check(panel.grab().save(str(out), "PNG"), f"Qt could not write {out.name}")
        check(out.is_file() and out.stat().st_size > 1000, f"{out.name} is empty")
        colours = _distinct_colours(out)
        check(colours >= 32, f"{out.name} has only {colours} colours: the mosaic was not drawn")
    finally:
        panel.close()
        panel.deleteLater()
        app.processEvents()


@contextlib.contextmanager
def first_run_shown(ctx: Context, settings_file: str, restore: bool, device: str | None = None,
                    size: tuple[int, int] | None = None):
    """The main window offscreen on the settings in `settings_file` (in the working folder; `device` written into
    them first), `size` if given, until it shows its first run: (the window, that run's outcome), checked to have
    come within APP_TIMEOUT_S and with no error shown. The window is closed after."""
    from PySide6.QtCore import QEventLoop, QSettings, QTimer

    from inspector.gui.window.main_window import MainWindow

    app = ctx.qapp()
    settings = QSettings(str(Path.cwd() / settings_file), QSettings.IniFormat)
    if device is not None:
        settings.setValue("device", device)
    outcome: dict = {}
    loop = QEventLoop()
    window = MainWindow(settings=settings, restore=restore)
    try:
        window.sigResultShown.connect(lambda o: (outcome.setdefault("result", o), loop.quit()))
        window.sigFailedShown.connect(lambda m: (outcome.setdefault("error", m), loop.quit()))
        if size is not None:
            window.resize(*size)
        window.show()
        QTimer.singleShot(int(APP_TIMEOUT_S * 1000), loop.quit)
        loop.exec()
        check("error" not in outcome, f"the window showed an error: {outcome.get('error')}")
        check("result" in outcome, f"no run was shown within {APP_TIMEOUT_S:.0f} s")
        yield window, outcome["result"]
    finally:
        window.close()
        window.deleteLater()
        app.processEvents()


def step_app_window(ctx: Context) -> None:
    """The main window opens offscreen, loads the demo on its worker thread and shows a run."""
    with first_run_shown(ctx, "設定-ü.ini", restore=False, size=(1200, 800)) as (window, shown):
        check(shown.result.captures, "the window's run captured nothing")
        out = Path.cwd() / "窗口-ü.png"
        check(window.grab().save(str(out), "PNG"), f"Qt could not write {out.name}")
        check(_distinct_colours(out) >= 32, f"{out.name} is blank")
