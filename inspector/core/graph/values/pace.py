"""How often the Graph tab's overlay is worked out while a video plays. Each overlay is a forward and backward of
its own in the worker, beside the frames' runs: asked after every frame, the video ran at half its rate and each
answer came one frame late, so it was never painted. While a video plays: at most one overlay in flight, the next
asked no sooner than GAP times the last one's duration after it ended (the overlay takes at most 1 / (GAP + 1) of
the worker's time), and an answer one or more frames old is painted, not thrown away. A still input is not paced.
Qt-free: the times are the caller's (`time.perf_counter()`)."""

from __future__ import annotations

from dataclasses import dataclass

GAP = 3.0  # the worker's time between two overlays, in units of the last overlay's duration


@dataclass
class Pace:
    """The overlay's pace: when the one in flight was asked, when the last one ended and how long it took."""

    asked_at: float | None = None  # the one in flight asked at (None: nothing in flight)
    ended_at: float | None = None
    took: float = 0.0

    def wait(self, now: float) -> float:
        """Seconds until the next overlay may be asked (0 or less: now), nothing being in flight."""
        return 0.0 if self.ended_at is None else self.ended_at + GAP * self.took - now

    def asked(self, now: float) -> None:
        self.asked_at = now

    def answered(self, now: float) -> None:
        if self.asked_at is not None:
            self.took = now - self.asked_at
            self.ended_at = now
        self.asked_at = None
