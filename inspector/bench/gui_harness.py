"""What the GUI bench drives: a real MainWindow on one model (`Session`), a 10 ms heartbeat on the GUI thread
whose gaps are its stalls (`Heartbeat`), waiting while Qt runs, and the plain forward + backward a run is
compared with. Shared by `bench --gui` (inspector.bench.gui), `bench --gui --video` and the handoffs probe.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np


def _qt_app():
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY") or sys.platform in ("win32", "darwin")):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    return QApplication.instance() or QApplication(sys.argv[:1])


def _wait_until(predicate: Callable[[], bool], timeout_s: float = 300.0) -> None:
    """Run the event loop (so timers and queued signals are served) until `predicate()` holds."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    poll = QTimer(interval=2)
    deadline = time.perf_counter() + timeout_s

    def check() -> None:
        if predicate() or time.perf_counter() > deadline:
            loop.quit()

    poll.timeout.connect(check)
    poll.start()
    check()
    if not predicate():
        loop.exec()
    poll.stop()
    if not predicate():
        raise TimeoutError(f"waited {timeout_s:.0f} s")


def _pause(seconds: float) -> None:
    end = time.perf_counter() + seconds
    _wait_until(lambda: time.perf_counter() >= end, seconds + 5)


class Heartbeat:
    """A 10 ms timer on the GUI thread; the gaps between its ticks are the GUI thread's stalls."""

    def __init__(self, interval_ms: int = 10) -> None:
        from PySide6.QtCore import Qt, QTimer

        self.timer = QTimer(interval=interval_ms)
        self.timer.setTimerType(Qt.PreciseTimer)
        self.timer.timeout.connect(self._on_tick)
        self.last = 0.0
        self.gaps: list[tuple[float, float]] = []  # (start, end) of every tick-to-tick interval

    def start(self) -> None:
        self.last, self.gaps = time.perf_counter(), []
        self.timer.start()

    def take(self, since: float = float("-inf"), until: float = float("inf")) -> float:
        """The longest gap, clipped to [since, until], recorded since start() or the last take()."""
        self._on_tick()
        longest = max((min(b, until) - max(a, since) for a, b in self.gaps), default=0.0)
        self.gaps = []
        return max(longest, 0.0)

    def stop(self) -> None:
        self.timer.stop()

    def _on_tick(self) -> None:
        now = time.perf_counter()
        self.gaps.append((self.last, now))
        self.last = now


class Session:
    """One MainWindow on one model, auto-run off unless asked, with settings in `folder`."""

    def __init__(self, folder: Path, source: str, input_source: str, device: str, auto_run: bool = False) -> None:
        from PySide6.QtCore import QSettings

        from inspector.gui.window.main_window import MainWindow

        settings = QSettings(str(folder / f"{source}.ini"), QSettings.IniFormat)
        settings.setValue("model/source", source)
        settings.setValue("input", input_source)
        settings.setValue("device", device)
        self.window = MainWindow(settings=settings, ask_trust=lambda _name, _what: False)
        self.window.auto_run.setChecked(auto_run)
        self.window.resize(1400, 900)
        self.window.show()
        self.shown_at = time.perf_counter()
        self.shown: list = []
        self.failed: list[str] = []
        self.window.sigResultShown.connect(self.shown.append)
        self.window.sigFailedShown.connect(self.failed.append)
        _wait_until(lambda: self.window.loaded is not None or bool(self.failed))
        if self.failed:
            raise RuntimeError(self.failed[-1])

    def settled(self) -> bool:
        w = self.window
        done = {o.run_id for o in self.shown}
        return not w.state.timer.isActive() and w.worker.pending() == 0 and (
            w.state.last_run_id in done or bool(self.failed))

    def run(self) -> float:
        """Press Run; seconds until the result is drawn and painted."""
        count = len(self.shown)
        start = time.perf_counter()
        self.window.state.run()
        _wait_until(lambda: len(self.shown) > count or bool(self.failed))
        if self.failed:
            raise RuntimeError(self.failed[-1])
        self.window.repaint()
        return time.perf_counter() - start

    def close(self) -> None:
        self.window.close()
        self.window.deleteLater()


def _noise_image(folder: Path) -> str:
    from PIL import Image

    pixels = (np.random.default_rng(0).random((256, 320, 3)) * 255).astype(np.uint8)
    path = folder / "noise.png"
    Image.fromarray(pixels).save(path)
    return str(path)


def _plain_seconds(session: Session, input_source: str, repeats: int) -> float:
    """Forward + loss.backward() on the worker's own model and input (the worker is idle)."""
    from inspector.core.target.objective import Target, objective

    from .timing import timed

    bench = session.window.worker.bench
    model = bench.loaded.module
    x = bench.input_tensor(input_source).to(bench.loaded.device)  # decoded on the CPU, as the worker's runs
    target = Target("top1")
    times = []

    def step() -> None:
        model.zero_grad(set_to_none=True)
        loss, _, _ = objective(model(x.clone().requires_grad_(True)), target)
        loss.backward()

    for i in range(repeats + 1):
        seconds = timed(step, x.device)
        if i:
            times.append(seconds)
    model.zero_grad(set_to_none=True)
    return statistics.median(times)
