"""Part of the app's state (`AppState`): a video file or camera as the input, frame after frame.

Frames are decoded on the feed's thread (`LiveFeed`). One frame at a time goes to the
worker: while its run is going and until the window has drawn it, newer frames replace each
other in the feed (dropped, never queued); the newest is sent when the panels are drawn, so
every frame that runs is drawn whole and the worker never takes the CPU from the drawing.
Model, ticks and edits stay; a change to them re-runs the frame on screen. Snapshot saves
that frame as a PNG and makes it an ordinary input.
"""

from __future__ import annotations

import collections
import tempfile
import time
from pathlib import Path

from PySide6.QtCore import QTimer

#: Frames per second are counted over the frames drawn in this many seconds.
FPS_WINDOW_S = 2.0


class LiveInput:
    """Mixed into AppState (which has `live`, `frame`, `input`, `notify`, `run`, the signals)."""

    def open_live(self, source: str, pace: str = "realtime") -> None:
        """Play a video file or `camera:N` as the input (a folder or earlier video is closed)."""
        from .live_feed import LiveFeed

        self.stop_live()
        if self.folder is not None:
            self.folder = None
            self.sigFolderShown.emit(None)
        if self._next_frame is None:  # one timer for every frame (a singleShot per frame leaks a weakref)
            self._next_frame = QTimer(self, singleShot=True, interval=1)
            self._next_frame.timeout.connect(self._on_frame)
        feed = LiveFeed(source, pace, self)
        feed.sigFrame.connect(self._on_frame)
        feed.sigEnded.connect(self._on_live_ended)
        self.live, self._live_busy, self._drawn_at = feed, False, collections.deque()
        self.frame = self.shown_frame = None
        self.sigInputShown.emit(source)
        self.sigLive.emit(self.live_status())
        feed.start()

    def stop_live(self) -> None:
        feed, self.live = self.live, None
        if self._next_frame is not None:
            self._next_frame.stop()
        if feed is not None:
            feed.stop()
            feed.sigFrame.disconnect(self._on_frame)
            feed.deleteLater()
            self.frame = self.shown_frame = None
            self.sigLive.emit(None)

    def close_live(self) -> None:
        """Stop the video; the last still input (file, sample, folder image) comes back."""
        self.stop_live()
        if self.good_input:
            self._use_input(self.good_input, shown=self.folder.root if self.folder else None)

    def pause_live(self, paused: bool) -> None:
        if self.live is not None:
            self.live.pause(paused)
            self.sigLive.emit(self.live_status())

    def step_live(self) -> None:
        """One more frame while paused."""
        if self.live is not None:
            self.live.pause(True)
            self.live.step()

    def snapshot(self) -> str | None:
        """Save the frame on screen as a PNG and make it the input (the video stops)."""
        frame = self.shown_frame
        if frame is None:
            self.notify("info", "No frame yet to take a snapshot of.")
            return None
        from PIL import Image

        name = Path(self.live.source.replace("camera:", "camera-")).stem if self.live else "video"
        path = Path(tempfile.gettempdir()) / f"inspector-{name}-frame{frame.index}-{time.time_ns()}.png"
        Image.fromarray(frame.rgb).save(path)
        self.set_input(str(path))
        self.notify("info", f"Snapshot of frame {frame.index} saved as {path}; it is the input now.")
        return str(path)

    def live_status(self) -> dict | None:
        """What the live bar and the status bar show: source, frame, count, rate, dropped, paused."""
        feed = self.live
        if feed is None:
            return None
        drawn = self._drawn_at
        fps = (len(drawn) - 1) / (drawn[-1] - drawn[0]) if len(drawn) > 1 and drawn[-1] > drawn[0] else 0.0
        return {"source": feed.source, "frame": self.shown_frame.index if self.shown_frame else None,
                "count": feed.frame_count, "fps": fps, "dropped": feed.dropped, "paused": feed.paused,
                "ended": feed.ended}

    # -- frames ---------------------------------------------------------------------------------
    def _on_frame(self) -> None:
        if self.live is None or self._live_busy or self.model is None:
            return  # the frame waits in the feed, replaced by newer ones
        frame = self.live.take()
        if frame is None:
            return
        self.frame = frame
        self.input = f"{self.live.source}@frame {frame.index}"
        self._live_busy = self.run()

    def _live_drawn(self) -> None:
        """The window drew a live frame's result: count it (frames per second), send the newest frame."""
        if self.live is None:
            return
        now = time.perf_counter()
        drawn = self._drawn_at
        drawn.append(now)
        while drawn and now - drawn[0] > FPS_WINDOW_S:
            drawn.popleft()
        self._live_busy = False
        self.sigLive.emit(self.live_status())
        # After the paint this result asked for (a timer comes after the posted update requests):
        # the worker's run would otherwise contend with the painting for the GIL and the cores.
        self._next_frame.start()

    def _live_failed(self) -> None:
        if self.live is not None:
            self._live_busy = False
            self.live.pause(True)
            self.sigLive.emit(self.live_status())

    def _on_live_ended(self, message: str) -> None:
        if self.live is None:
            return
        if message:
            self.notify("error", message)
        else:
            self.notify("info", f"End of {Path(self.live.source).name} ({self.live.decoded} frames).")
        self.sigLive.emit(self.live_status())
