"""Progress said in words for the status bar: "Occlusion: 120 of 441 windows (35.2/s, 9 s left; Esc cancels)"."""

from __future__ import annotations

import time


#: No rate is said before this many seconds of counting: over less it is noise ("1903725.9/s" after a first
#: batch that came at once, "0.0/s" before any).
RATE_AFTER_S = 1.0


def rate_reporter(what: str, unit: str, say, tell=None, from_first_report: bool = False):
    """A progress(done, total) callback that `say`s the phase with the rate and the time left, and `tell`s
    (done, total). The rate counts from now, or, `from_first_report`, from the first report (a resumed job:
    only what this run did); a new total is a new phase (a map, then its scores), counted from 0 again. Until
    RATE_AFTER_S have passed and some work is done, only the count is said."""
    first: list = [] if from_first_report else [(time.perf_counter(), 0)]
    totals: list = []

    def progress(done: int, total: int) -> None:
        if totals and totals[-1] != total and not from_first_report:
            first[:] = [(time.perf_counter(), 0)]
        totals[:] = [total]
        if not first:
            first.append((time.perf_counter(), done))
        before, elapsed = first[0][1], time.perf_counter() - first[0][0]
        rate = (done - before) / elapsed if elapsed >= RATE_AFTER_S and done > before else 0.0
        eta = f", {(total - done) / rate:.0f} s left" if rate else ""
        said = f"{rate:.1f}/s{eta}; " if rate else ""
        say(f"{what}: {done} of {total} {unit} ({said}Esc cancels)")
        if tell is not None:
            tell(done, total)

    return progress
