"""Ctrl-C during a job over a folder (the atlas, the concepts): the first asks the job to stop after the batch in
flight (it saves its state, and the same command resumes), a second stops at once, and more of them are ignored
while that unwinds. Once the job has written its result, Ctrl-C has nothing left to stop: the summary and the
shutdown go on (the dispatcher gives a caller in Python its own handler back)."""

from __future__ import annotations

import signal
import sys


class StopAfterBatch:
    """`with StopAfterBatch() as stop: job(cancel=stop.asked_to); stop.written = True`"""

    def __init__(self) -> None:
        self.asked = False
        self.written = False

    def asked_to(self) -> bool:
        return self.asked

    def _on_interrupt(self, _signum, _frame) -> None:
        if self.asked:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            raise KeyboardInterrupt
        self.asked = True
        print("\nstopping after this batch (Ctrl-C again to stop at once)...", file=sys.stderr)

    def __enter__(self) -> StopAfterBatch:
        self.previous = signal.signal(signal.SIGINT, self._on_interrupt)
        return self

    def __exit__(self, *_exc) -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN if self.written else self.previous)
