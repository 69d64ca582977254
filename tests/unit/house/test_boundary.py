"""The core stays Qt-free: importing every inspector.core module pulls in no Qt."""

import pkgutil
import subprocess
import sys

import pytest

import inspector.core


def test_core_imports_no_qt():
    names = [m.name for m in pkgutil.walk_packages(inspector.core.__path__, "inspector.core.")]  # subpackages too
    assert {"inspector.core.atlas.store", "inspector.core.sources.loader", "inspector.core.records.failure"} <= set(names)
    assert "inspector.core.engine.runner" in names
    code = (
        "import importlib, sys\n"
        f"for name in {names!r}: importlib.import_module(name)\n"
        "import inspector.cli\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6')"
        " or m.startswith('inspector.gui')]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.fixture(scope="module")
def window_imports() -> list[str]:
    """One fresh interpreter that imports the window's modules: the lines it printed (what of torch and of the
    argument checker was imported by then, then what the first checked call said). Both tests below read it."""
    code = (
        "import os, sys\n"
        "os.environ['QT_QPA_PLATFORM'] = 'offscreen'\n"
        "import inspector.gui.window.main_window, inspector.gui.app, inspector.gui.state, inspector.gui.worker.local\n"
        "print(','.join(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'torchvision', 'timm'})))\n"
        "print(','.join(sorted({m.split('.')[0] for m in sys.modules} & {'typeguard', 'unittest', 'asyncio'})))\n"
        "from inspector.core.common.arguments import checked\n"
        "@checked\n"
        "def f(n: int) -> int: return n\n"
        "try: f('x')\n"
        "except TypeError as exc: print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def test_window_imports_no_torch(window_imports):
    """Item 14 of the app issue: the window's modules import neither torch nor torchvision, so the
    window is on screen before the engine (imported by the worker thread) has loaded."""
    assert window_imports[0] == ""


def test_window_imports_no_argument_checker(window_imports):
    """Item 19 of the app issue: typeguard (with unittest.mock and asyncio, which it imports: 0.24 s of the
    window's 2.7 s of imports on a 2-core machine) loads with the first checked call, not with the window."""
    assert window_imports[1:] == ["", "f(): n must be int, not 'x'."]
