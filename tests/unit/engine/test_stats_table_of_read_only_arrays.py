"""Arrays that came over the engine protocol are read-only views of the frames' bytes: the Stats tab's table of a
remote result (its input and output have no statistics of their own) is the table of writable copies, without
torch's "not writable" warning (seen in the window on a remote engine)."""

from __future__ import annotations

import warnings

import numpy as np

from inspector.core.engine.diagnostics import stats_table
from inspector.core.engine.result import RunResult


def test_the_stats_table_of_read_only_arrays_is_that_of_writable_ones_without_a_warning():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((1, 3, 8, 8)).astype(np.float32), rng.standard_normal((1, 10)).astype(np.float32)

    def read_only(a):
        return np.frombuffer(a.tobytes(), dtype=a.dtype).reshape(a.shape)

    assert not read_only(x).flags.writeable
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = stats_table(RunResult(input=read_only(x), output=read_only(y)))
    assert table == stats_table(RunResult(input=x, output=y))
