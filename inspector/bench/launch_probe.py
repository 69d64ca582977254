"""Launch probe: `python -m inspector.bench.launch_probe T0 SETTINGS.ini` prints JSON with the
seconds from T0 (the parent's clock just before it started this process) to the window on
screen and to the demo's first panels drawn, what was imported when the window showed, and the
longest GUI-thread stall from the window shown to the first panels (a 10 ms heartbeat): the only
place where it includes the worker importing PyTorch, as a user's start does."""

from __future__ import annotations

import json
import sys
import time


def main() -> int:
    t0, ini = float(sys.argv[1]), sys.argv[2]
    from PySide6.QtCore import QSettings, QTimer

    import inspector.gui.window.main_window  # noqa: F401  (everything the window imports)
    from inspector.gui.app import start_app

    # torch may be in sys.modules by the first paint: the worker thread is importing it by then
    torch_by_window_code = "torch" in sys.modules
    from inspector.bench.gui_harness import Heartbeat

    app, window = start_app([], QSettings(ini, QSettings.IniFormat))
    app.processEvents()  # the first paint: the window is shown once it is done
    beat = Heartbeat()
    beat.start()  # from here (it was started before the first paint, whose 39-54 ms counted as a stall)
    report = {"window_s": time.time() - t0, "torch_at_window": torch_by_window_code,
              "torchvision_at_window": "torchvision" in sys.modules}

    def shown(_outcome) -> None:
        report["panels_s"] = time.time() - t0
        report["stall_s"] = beat.take()
        beat.stop()
        report["torchvision_at_panels"] = "torchvision" in sys.modules
        window.close()
        app.quit()

    window.sigResultShown.connect(shown)
    window.sigFailedShown.connect(lambda message: report.setdefault("error", message))
    QTimer.singleShot(120_000, app.quit)
    app.exec()
    print(json.dumps(report))
    return 0 if "panels_s" in report else 1


if __name__ == "__main__":
    sys.exit(main())
