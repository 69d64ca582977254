"""The floors under the launch rows: `python -m inspector.bench.launch_floor` prints JSON with the seconds a fresh
process takes to import torch after its libraries are preloaded as the app does (`torch_import_s`: the demo's first
panels cannot come sooner after the window), the seconds to import the window's modules (`window_imports_s`:
PySide6, pyqtgraph, numpy and the app's), and the longest gap of a 5 ms heartbeat on one thread while another
preloads and imports torch (`import_stall_s`): the GIL that the import holds in single C calls (torch's
extension module initialising, its operator registrations) stalls any other Python thread of the process (the
app's GUI thread, woken by Qt's timer, measured 54-67 ms where this loop of 5 ms sleeps measured 156-234 ms)."""

from __future__ import annotations

import json
import os
import threading
import time


def bytecode_cached() -> bool:
    """Whether torch's modules load from bytecode written before (a launch after the first, or an install that
    compiled it: `UV_COMPILE_BYTECODE=1 uv sync`), not compiled from source at each start: where Python may not
    write it (PYTHONDONTWRITEBYTECODE) and the install did not, `import torch` takes about twice as long."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("torch")
    cached = Path(spec.origin).parent / "__pycache__" if spec and spec.origin else None
    return bool(cached and cached.is_dir() and any(cached.glob("*.pyc")))


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    started = time.perf_counter()
    import inspector.gui.window.main_window  # noqa: F401 - everything the window imports

    window_imports = time.perf_counter() - started
    done = threading.Event()
    took: list[float] = []

    def load() -> None:
        from inspector.gui.worker.torch_libraries import preload_torch_libraries

        t = time.perf_counter()
        preload_torch_libraries()
        import torch  # noqa: F401

        took.append(time.perf_counter() - t)
        done.set()

    threading.Thread(target=load, daemon=True).start()
    longest, last = 0.0, time.perf_counter()
    while not done.is_set():
        time.sleep(0.005)
        now = time.perf_counter()
        longest, last = max(longest, now - last - 0.005), now
    print(json.dumps({"window_imports_s": window_imports, "torch_import_s": took[0], "import_stall_s": longest,
                      "bytecode_cached": bytecode_cached()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
