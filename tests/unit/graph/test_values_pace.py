"""While a video plays, the Graph tab's overlay is asked GAP times its own duration apart (at most 1 / (GAP + 1) of
the worker's time), worked out by hand on given times."""

from inspector.core.graph.values.pace import GAP, Pace


def test_the_next_overlay_waits_gap_times_the_last_ones_duration():
    pace = Pace()
    assert pace.wait(0.0) == 0.0  # nothing done yet: ask now
    pace.asked(10.0)
    pace.answered(10.5)  # took 0.5 s
    assert (pace.took, pace.ended_at, pace.asked_at) == (0.5, 10.5, None)
    assert pace.wait(10.5) == GAP * 0.5 and pace.wait(10.5 + GAP * 0.5) == 0.0 and pace.wait(20.0) < 0
    pace.answered(30.0)  # an answer with nothing asked (superseded) changes nothing
    assert (pace.took, pace.ended_at) == (0.5, 10.5)
    worker = 0.5 / (0.5 + GAP * 0.5)  # one overlay of 0.5 s per 0.5 + GAP x 0.5 s
    assert worker == 1 / (GAP + 1) == 0.25
