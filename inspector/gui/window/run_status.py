"""The status bar's run indicator: what is happening (loading, running, drawing), for how long,
a busy bar (a progress bar while weights download), and the last run's device, time and memory.

While a video plays (`set_live`), each frame's run is not announced: the frames-per-second text
says what is happening, and the status bar does not show, hide and relayout a busy bar many times
a second (that repainting took GUI time from the panels)."""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QProgressBar


class RunStatus:
    def __init__(self, bar) -> None:
        self.phase_label = QLabel()
        self.busy = QProgressBar()
        self.busy.setMaximumWidth(140)
        self.busy.setTextVisible(False)
        self.busy.hide()
        self.device = QLabel()
        self.time = QLabel()
        self.memory = QLabel()
        self.live = QLabel()  # frames per second while a video or camera is the input
        self.engine = QLabel()  # where a remote engine is ("" in process)
        for widget in (self.phase_label, self.busy, self.live, self.engine, self.device, self.time, self.memory):
            bar.addPermanentWidget(widget)
        self.phase = ""
        self.playing = False  # a video plays: runs are not announced one by one
        self.started = 0.0
        self.timer = QTimer(bar, interval=200)
        self.timer.timeout.connect(self._tick)

    def set_phase(self, phase: str) -> None:
        """Show `phase` with its elapsed time; '' when idle."""
        if phase == self.phase:
            return
        if not self.phase:
            self.started = time.perf_counter()
        self.phase = phase
        if phase and not self.playing:
            self.busy.setRange(0, 0)  # a busy indicator until a download says how far it is
            self.busy.show()
            self.timer.start()
        else:
            self.timer.stop()
            self.busy.hide()
        self._tick()

    def text(self) -> str:
        return self.phase_label.text()

    def _tick(self) -> None:
        if self.phase and not self.playing:
            self.phase_label.setText(f"{self.phase}… {time.perf_counter() - self.started:.1f} s")
        else:
            self.phase_label.setText("")

    def set_progress(self, done: int, total: int) -> None:
        if total:
            self.busy.setRange(0, total)
            self.busy.setValue(done)
            self.phase_label.setText(f"{self.phase or 'Downloading'}… {done / 2**20:.0f} of {total / 2**20:.0f} MB "
                                     f"(Esc cancels)")

    def set_engine(self, where: str) -> None:
        """Where the engine is ("engine ws://host:port · cpu"); nothing for the one in this process."""
        self.engine.setText(where)

    def set_live(self, text: str, playing: bool = False) -> None:
        """The live input's rate (`text`, '' without one); `playing`: frames are being run one after another."""
        self.live.setText(text)
        if playing != self.playing:
            self.playing = playing
            phase, self.phase = self.phase, ""
            self.set_phase(phase)

    def show_result(self, result) -> None:
        self.device.setText(result.device)
        self.time.setText(f"run {result.timings.get('total_s', 0.0) * 1000:.0f} ms")
        self.memory.setText(f"captures {result.held_bytes() / 2**20:.1f} MB")
