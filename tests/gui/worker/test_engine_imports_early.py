"""Issue 41, item 19 (start-up): the worker imports typeguard with the engine, before the model loads. The first
run's checked calls imported it (0.2 s of Python reading every package's entry points) while the GUI thread laid
out the model just loaded: the two threads took turns on the GIL, and that turn stalled for 50-68 ms."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CODE = """
import sys
from PySide6.QtCore import QCoreApplication
app = QCoreApplication([])
from inspector.gui.worker.local import Worker
before = "typeguard" in sys.modules
worker = Worker()
worker.start_engine()
print(before, worker.bench is not None, "typeguard" in sys.modules)
"""


def test_the_engine_start_imports_typeguard():
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([sys.executable, "-c", CODE], cwd=root, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-3:] == ["False", "True", "True"]  # not by the window's imports; by the engine's
