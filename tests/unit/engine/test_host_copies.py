"""Captures come to the host as copies in the tensor's own layout; on CUDA they are queued into pinned memory
and waited for once a run (`to_numpy(queued=True)`, `HookSet.finish_stats`)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from inspector.core.engine.hookset import _dense, to_numpy


@pytest.mark.parametrize("make, dense", [
    (lambda t: t, True),
    (lambda t: t.permute(0, 2, 3, 1), True),  # ConvNeXt's Permute: dense in another order
    (lambda t: t.contiguous(memory_format=torch.channels_last), True),
    (lambda t: t[:, :, ::2], False),  # every other row: gaps
    (lambda t: t[:, :1].expand(2, 3, 4, 5), False),  # broadcast: overlapping
    (lambda t: t[:1, :1], True),  # sizes of 1 have any stride
])
def test_a_layout_is_dense_when_its_strides_leave_no_gap_and_no_overlap(make, dense):
    t = make(torch.arange(2 * 3 * 4 * 5, dtype=torch.float32).reshape(2, 3, 4, 5))
    assert _dense(t) is dense
    assert (t.is_contiguous() or t.is_contiguous(memory_format=torch.channels_last)) <= dense


def test_a_cpu_capture_is_a_copy_whatever_is_asked():
    t = torch.arange(6.0).reshape(2, 3)
    for queued in (False, True):
        array = to_numpy(t, queued=queued)
        t.add_(1)
        assert np.array_equal(array, np.arange(6.0).reshape(2, 3) + (1 if queued else 0))
