"""Every seed of the attribution methods shares the weights' range and message (issue 40, item 4): 0 to 2**32 - 1,
a one-line error otherwise, never a traceback from deep inside (a 2**64 noise seed used to raise from smooth.py)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from inspector.core.attribution import attribute
from inspector.core.common.errors import SpecError
from inspector.core.sources.seeds import MAX_SEED


def small() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(4, 3)).eval()


@pytest.mark.parametrize("seed", [-1, MAX_SEED + 1, 18446744073709551616])
def test_a_noise_seed_out_of_range_is_one_line(seed):
    with pytest.raises(SpecError, match=rf"The noise seed must be a whole number from 0 to {MAX_SEED}, not {seed}\."):
        attribute(small(), torch.rand(1, 3, 8, 8), "smoothgrad", 0, options={"samples": 2, "seed": seed})


def test_a_baseline_seed_out_of_range_is_one_line():
    with pytest.raises(SpecError, match=rf"The baseline seed must be a whole number from 0 to {MAX_SEED}, not -1\."):
        attribute(small(), torch.rand(1, 3, 8, 8), "ig", 0,
                  options={"steps": 2, "baseline": "uniform", "baseline_seed": -1})


def test_the_largest_seed_runs_and_repeats():
    x = torch.rand(1, 3, 8, 8, generator=torch.Generator().manual_seed(1))
    first = attribute(small(), x, "smoothgrad", 0, options={"samples": 2, "seed": MAX_SEED})
    again = attribute(small(), x, "smoothgrad", 0, options={"samples": 2, "seed": MAX_SEED})
    assert dict(first.details)["seed"] == MAX_SEED and (first.map == again.map).all()
