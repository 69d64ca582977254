"""Progress said in words (`progress_rate.rate_reporter`): the count at once, the rate once it means something."""

from __future__ import annotations


def test_no_rate_is_said_before_it_means_something(monkeypatch):
    """Issue 52 item 7: a rate over the first moments of a phase is noise (the issue saw "1903725.9/s"; a first
    batch of 64 steps 34 µs in would be said as 64 / 34e-6 = 1882352.9/s). The rate comes once a second of work is
    counted, from then on."""
    from inspector.gui.common import progress_rate

    now = [10.0]
    monkeypatch.setattr(progress_rate.time, "perf_counter", lambda: now[0])
    said = []
    progress = progress_rate.rate_reporter("Attribution (ig)", "steps", said.append)
    for t, done in ((10.000034, 64), (10.9, 128), (11.0, 192), (12.0, 256)):
        now[0] = t
        progress(done, 512)
    assert said == ["Attribution (ig): 64 of 512 steps (Esc cancels)",
                    "Attribution (ig): 128 of 512 steps (Esc cancels)",
                    "Attribution (ig): 192 of 512 steps (192.0/s, 2 s left; Esc cancels)",  # 192 in 1 s, 320 left
                    "Attribution (ig): 256 of 512 steps (128.0/s, 2 s left; Esc cancels)"]  # 256 in 2 s, 256 left
