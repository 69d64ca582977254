"""Starting the desktop app."""

from __future__ import annotations

import sys

#: What Qt's X11 platform plugin links against beyond Xlib: (library, Debian package).
XCB_LIBRARIES = (
    ("xcb-cursor", "libxcb-cursor0"), ("xcb-icccm", "libxcb-icccm4"), ("xcb-keysyms", "libxcb-keysyms1"),
    ("xcb-image", "libxcb-image0"), ("xcb-render-util", "libxcb-render-util0"), ("xcb-shape", "libxcb-shape0"),
    ("xcb-randr", "libxcb-randr0"), ("xcb-xfixes", "libxcb-xfixes0"), ("xcb-sync", "libxcb-sync1"),
    ("xcb-xkb", "libxcb-xkb1"), ("xkbcommon-x11", "libxkbcommon-x11-0"),
)


def missing_platform_library() -> str | None:
    """On Linux X11, Qt aborts the process when a system xcb library is missing; name them instead."""
    import ctypes.util
    import os

    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM", "xcb") != "xcb":
        return None
    if not os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return None
    missing = [package for library, package in XCB_LIBRARIES if not ctypes.util.find_library(library)]
    if not missing:
        return None
    return (f"Qt needs these system libraries to open windows on X11: {', '.join(missing)}. Install them "
            f"(Debian/Ubuntu: sudo apt install {' '.join(missing)}) and start again.")


def start_app(argv: list[str] | None = None, settings=None, engine: str | None = None, token_file=None):
    """The QApplication and the main window, shown at once; the engine loads behind it.

    Only Qt and the app's torch-free modules are imported here: torch is imported by the
    worker thread once the window has been painted.
    """
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from inspector.demo.paths import resources_dir

    from .window.main_window import MainWindow
    from .common.qt_messages import quiet_qt

    quiet_qt()
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    app.setApplicationName("Network Inspector")
    app.setOrganizationName("NetworkInspector")
    icon = resources_dir() / "icons" / "network-inspector.png"
    if icon.is_file():
        app.setWindowIcon(QIcon(str(icon)))
    window = MainWindow(settings=settings, engine_after_paint=True, engine=engine, token_file=token_file)
    window.show()
    return app, window


def run_app(argv: list[str] | None = None, engine: str | None = None, token_file=None) -> int:
    """The app; `engine`: the URL of a `network-inspector serve` it runs on (`token_file`: its token)."""
    from inspector.core.engine.allocator import keep_freed_memory

    problem = missing_platform_library()
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    keep_freed_memory()
    app, _window = start_app(argv, engine=engine, token_file=token_file)
    return int(app.exec())
