"""A video file or camera decoded on a thread of its own; the GUI takes the newest frame when it is ready.

The decoder keeps one frame at most: a frame that arrives before the last one was taken
replaces it (counted in `dropped`), so a slow model never builds a backlog and memory stays
flat however long the video. Files play at their frame rate (`pace="realtime"`) or as fast
as frames are taken (`pace="demand"`, for benchmarks); cameras at the camera's rate.
"""

from __future__ import annotations

import threading
import time

from PySide6.QtCore import QObject, Signal

from ..common.gui_thread_signals import HeardOnGuiThread


class LiveFeed(HeardOnGuiThread, QObject):
    """Signals
    -------
    sigOpened(object): (fps, (width, height), frame_count or 0) once the source is open.
    sigFrame(): a new frame is waiting; `take()` it.
    sigEnded(str): the video ended ("") or failed (the message). The feed's thread has finished.
    """

    _sigOpened = Signal(object)
    _sigFrame = Signal()
    _sigEnded = Signal(str)

    def __init__(self, source: str, pace: str = "realtime", parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.hear_on_gui_thread()
        self.source = source
        self.pace = pace
        self.fps = 0.0
        self.frame_count = 0
        self.decoded = 0
        self.dropped = 0  # frames replaced before anyone took them
        self.ended = False
        self._slot = None
        self._lock = threading.Condition()
        self._stop = False
        self._paused = False
        self._steps = 0  # frames to decode while paused
        self._thread = threading.Thread(target=self._run, name="inspector-video", daemon=True)

    # -- GUI thread ----------------------------------------------------------------------------
    def start(self) -> None:
        self._thread.start()

    def take(self):
        """The newest frame (a core.video.Frame) not taken yet, or None."""
        with self._lock:
            frame, self._slot = self._slot, None
            self._lock.notify_all()
        return frame

    def has_frame(self) -> bool:
        """A decoded frame is waiting to be taken."""
        with self._lock:
            return self._slot is not None

    @property
    def paused(self) -> bool:
        return self._paused

    def pause(self, paused: bool = True) -> None:
        with self._lock:
            self._paused = paused
            self._lock.notify_all()

    def step(self) -> None:
        """While paused: decode one more frame."""
        with self._lock:
            self._steps += 1
            self._lock.notify_all()

    def stop(self, timeout: float = 5.0) -> None:
        with self._lock:
            self._stop = True
            self._lock.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout)

    # -- the decoding thread ----------------------------------------------------------------
    def _run(self) -> None:
        from inspector.core.common.errors import InspectorError
        from inspector.core.inputs.video import VideoReader

        try:
            reader = VideoReader(self.source)
        except InspectorError as exc:
            self._end(str(exc))
            return
        self.fps, self.frame_count = reader.fps, reader.frame_count
        self._sigOpened.emit((reader.fps, reader.size, reader.frame_count))
        message = ""
        try:
            due = time.perf_counter()
            for frame in reader.frames():
                if not self._wait_turn():
                    break
                if self.pace == "realtime" and not reader.camera and not self._paused:
                    due = max(due + 1.0 / reader.fps, time.perf_counter() - 2.0 / reader.fps)  # no rush after a pause
                    delay = due - time.perf_counter()
                    if delay > 0:
                        time.sleep(delay)
                self._put(frame)
        except InspectorError as exc:
            message = str(exc)
        except Exception as exc:  # noqa: BLE001 - a broken stream becomes a message
            message = f"Video stopped: {type(exc).__name__}: {exc}"
        finally:
            reader.close()
        self._end(message)

    def _wait_turn(self) -> bool:
        """Wait while paused (unless a step was asked) or, on demand, until the last frame was taken."""
        with self._lock:
            while not self._stop:
                if self._paused and self._steps == 0:
                    self._lock.wait(0.1)
                elif self.pace == "demand" and self._slot is not None and not self._paused:
                    self._lock.wait(0.1)
                else:
                    break
            if self._paused and self._steps:
                self._steps -= 1
            return not self._stop

    def _put(self, frame) -> None:
        with self._lock:
            if self._slot is not None:
                self.dropped += 1
            self._slot = frame
            self.decoded += 1
        self._sigFrame.emit()

    def _end(self, message: str) -> None:
        self.ended = True
        if not self._stop:
            self._sigEnded.emit(message)
