"""Statistics off the critical path: a run can leave the captures nobody is looking at without
statistics (`RunSpec.stats_now`), and `complete_statistics` works them out afterwards from the
arrays the run returned.

Those arrays hold the values at capture time: a capture is a copy, or shares the model's memory
only where the engine has shown that nothing changes it later (a shared capture is copied before
an in-place module runs on it, and a run whose shared captures were changed after all is done
again with copies; see inspector.core.sources.sharing). The same reductions run over the same memory
layout, so on the CPU the statistics are the very numbers the run would have computed; on a GPU
they are computed on the CPU copy (float32 sums in another order: equal to ~1e-6).
"""

from __future__ import annotations

import threading
from dataclasses import replace

import numpy as np
import torch

from ..common.arguments import need_instance
from ..common.errors import RunCancelled
from .result import RunResult
from .stats import StatsBatch, TensorStats

_CHUNK = 32  # captures between looks at `cancel`


def complete_statistics(result: RunResult, cancel: threading.Event | None = None) -> dict[str, TensorStats]:
    """Statistics of the captures `result` holds without them, by capture name. `result` itself
    is not changed (`result.set_stats(...)` fills them in). Raises RunCancelled when `cancel` is set."""
    need_instance(result, RunResult, "result", "a RunResult")
    out: dict[str, TensorStats] = {}
    batch = StatsBatch()
    names = result.stats_pending()
    for i, name in enumerate(names):
        if cancel is not None and cancel.is_set():
            raise RunCancelled()
        array = result.captures[name].array
        if array is None:
            continue
        batch.add(name, torch.from_numpy(np.asarray(array)), dtype=result.stats_deferred[name])
        if (i + 1) % _CHUNK == 0:
            out.update(batch.resolve())
    out.update(batch.resolve())
    return out


def with_statistics(result: RunResult, stats: dict[str, TensorStats]) -> RunResult:
    """A shallow copy of `result` (the same arrays) with `stats` filled in; `result` is unchanged."""
    filled = replace(result, captures=dict(result.captures))
    filled.set_stats(stats)
    return filled
