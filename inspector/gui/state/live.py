"""A video file or camera as the input, frame after frame (`AppState.live`).

Frames are decoded on the feed's thread (`LiveFeed`). One frame at a time goes to the
worker: while its run is going and until the window has drawn it, newer frames replace each
other in the feed (dropped, never queued); the newest is sent when the panels are drawn, so
every frame that runs is drawn whole and the worker never takes the CPU from the drawing.
Model, ticks and edits stay; a change to them re-runs the frame on screen. Snapshot saves
that frame as a PNG and makes it an ordinary input.
"""

from __future__ import annotations

import collections
import os
import time
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from inspector.core.common.errors import WriteError
from inspector.core.storage.writes import save_image

from .live_feed import LiveFeed

#: Frames per second are counted over the frames drawn in this many seconds.
FPS_WINDOW_S = 2.0


def snapshot_path(source: str, number: int) -> tuple[Path, str]:
    """Where a snapshot of frame `number` goes, and where that is in words: beside the video when its
    folder can be written, else in the home folder (a camera's too); never over an existing file."""
    if source.startswith("camera:"):
        folder, stem, where = Path.home(), source.replace(":", "-"), "in your home folder"
    else:
        video = Path(source)
        folder, stem = video.parent, video.stem
        where = f"beside {video.name}"
        if not os.access(folder, os.W_OK):
            folder, where = Path.home(), f"in your home folder ({video.parent} cannot be written)"
    path, n = folder / f"{stem}-frame{number}.png", 1
    while path.exists():
        n += 1
        path = folder / f"{stem}-frame{number}-{n}.png"
    return path, where


class LiveState(QObject):
    """Signals
    -------
    sigStatus(object): a video or camera is the input: its status() dict (frame, rate, ...); None when closed.
    """

    sigStatus = Signal(object)

    def __init__(self, app) -> None:
        super().__init__(app)
        self.app = app  # the AppState whose input this is
        self.feed: LiveFeed | None = None
        self.frame = None  # the frame (core.inputs.video.Frame) the last run was sent with
        self.shown_frame = None  # the frame whose result is on screen
        self.busy = False  # a frame is being run or drawn
        self._drawn_at: collections.deque = collections.deque()  # when the last frames were drawn
        # One timer for every frame (a singleShot per frame leaks a weakref): the next frame goes
        # after the paint of the last.
        self._next_frame = QTimer(self, singleShot=True, interval=1)
        self._next_frame.timeout.connect(self.on_frame)

    @property
    def playing(self) -> bool:
        """A video or camera is the input (playing, paused or ended)."""
        return self.feed is not None

    def open(self, source: str, pace: str = "realtime") -> None:
        """Play a video file or `camera:N` as the input (a folder or earlier video is closed)."""
        self.stop()
        self.app.folder.close()
        feed = LiveFeed(source, pace, self)
        feed.sigFrame.connect(self.on_frame)
        feed.sigEnded.connect(self._on_ended)
        self.feed, self.busy, self._drawn_at = feed, False, collections.deque()
        self.frame = self.shown_frame = None
        self.app.sigInputShown.emit(source)
        self.sigStatus.emit(self.status())
        feed.start()

    def stop(self) -> None:
        feed, self.feed = self.feed, None
        self._next_frame.stop()
        if feed is not None:
            feed.stop()
            feed.sigFrame.disconnect(self.on_frame)
            feed.deleteLater()
            self.frame = self.shown_frame = None
            self.sigStatus.emit(None)

    def close(self) -> None:
        """Stop the video; the last still input (file, sample, folder image) comes back."""
        self.stop()
        if self.app.good_input:
            self.app.use_input(self.app.good_input, shown=self.app.folder.root())

    def pause(self, paused: bool) -> None:
        if self.feed is not None:
            self.feed.pause(paused)
            self.sigStatus.emit(self.status())

    def step(self) -> None:
        """One more frame while paused."""
        if self.feed is not None:
            self.feed.pause(True)
            self.feed.step()

    def snapshot(self) -> str | None:
        """Save the frame on screen as a PNG and make it the input (the video stops)."""
        frame = self.shown_frame
        if frame is None:
            self.app.notify("info", "No frame yet to take a snapshot of.")
            return None
        from PIL import Image

        number = frame.index + 1  # as the live bar counts: the first frame is frame 1
        path, where = snapshot_path(self.feed.source if self.feed else "video", number)
        try:
            save_image(path, Image.fromarray(frame.rgb))
        except WriteError as exc:
            self.app.notify("error", f"No snapshot: {exc}")
            return None
        self.app.set_input(str(path))
        self.app.notify("info", f"Snapshot of frame {number} saved as {path.name} ({where}); it is the input now.")
        return str(path)

    def status(self) -> dict | None:
        """What the live bar and the status bar show: source, frame, count, rate, dropped, paused."""
        feed = self.feed
        if feed is None:
            return None
        drawn = self._drawn_at
        fps = (len(drawn) - 1) / (drawn[-1] - drawn[0]) if len(drawn) > 1 and drawn[-1] > drawn[0] else 0.0
        return {"source": feed.source, "frame": self.shown_frame.index if self.shown_frame else None,
                "count": feed.frame_count, "fps": fps, "dropped": feed.dropped, "paused": feed.paused,
                "ended": feed.ended}

    # -- frames ---------------------------------------------------------------------------------
    def on_frame(self) -> None:
        """Send the newest frame, unless one is being run or drawn, or no model is loaded yet."""
        if self.feed is None or self.busy or self.app.model is None:
            return  # the frame waits in the feed, replaced by newer ones
        frame = self.feed.take()
        if frame is None:
            return
        self.frame = frame
        self.app.input = f"{self.feed.source}@frame {frame.index}"
        self.busy = self.app.run()

    def result_shown(self) -> None:
        """The last run's result arrived: it shows the frame it was sent with."""
        self.shown_frame = self.frame

    def drawn(self) -> None:
        """The window drew a frame's result: count it (frames per second), send the newest frame."""
        if self.feed is None:
            return
        now = time.perf_counter()
        drawn = self._drawn_at
        drawn.append(now)
        while drawn and now - drawn[0] > FPS_WINDOW_S:
            drawn.popleft()
        self.busy = False
        self.sigStatus.emit(self.status())
        # After the paint this result asked for (a timer comes after the posted update requests):
        # the worker's run would otherwise contend with the painting for the GIL and the cores.
        self._next_frame.start()

    def failed(self) -> None:
        if self.feed is not None:
            self.busy = False
            self.feed.pause(True)
            self.sigStatus.emit(self.status())

    def _on_ended(self, message: str) -> None:
        if self.feed is None:
            return
        if message:
            self.app.notify("error", message)
        else:
            self.app.notify("info", f"End of {Path(self.feed.source).name} ({self.feed.decoded} frames).")
        self.sigStatus.emit(self.status())
