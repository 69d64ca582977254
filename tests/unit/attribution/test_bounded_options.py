"""Issue 52 item 6, in the attribution engine: a memory size too large to hold (400 digits: float infinity, whose
int() was an OverflowError), steps auto stopped by max_steps (its levels go 5, 9, 17, ..., so 512 reaches 257 and
the run said it was "chosen for a gap within" the tolerance), and deletion and insertion of a map that has no value
of the sign asked (every pixel 0 in its picture: they took pixels in raster order and said "most negative first")
are each said in words worked out here by hand."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from torch import nn

from inspector.core.attribution import attribute, parse_memory
from inspector.core.attribution.scores.faithfulness import faithfulness
from inspector.core.common.errors import SpecError

BIGGEST = "A memory size is below 2**63 bytes (8,388,608 TB), not {}."


@pytest.mark.parametrize("text, shown", [
    ("9" * 400, "'" + "9" * 56 + "..."),  # its repr's first 57 characters
    ("1" + "0" * 310 + "TB", "'1" + "0" * 55 + "..."),
    ("8388608TB", "'8388608TB'"),  # exactly 2**63 bytes
    (2**63, "9223372036854775808"),
])
def test_a_memory_size_too_large_is_one_line(text, shown):
    with pytest.raises(SpecError) as error:
        parse_memory(text)
    assert str(error.value) == BIGGEST.format(shown)


def test_memory_sizes_that_fit_are_bytes():
    assert parse_memory("8388607.9TB") == int(8388607.9 * 2**40)
    assert parse_memory("2GB") == 2 * 2**30 and parse_memory(2**63 - 1) == 2**63 - 1
    for below in (0, -3):
        with pytest.raises(SpecError, match=f"A memory size is above 0, not {below}."):
            parse_memory(below)


def test_an_api_memory_size_too_large_or_below_1_is_one_line():
    x = torch.ones(1, 3, 4, 4)
    net = nn.Sequential(nn.Flatten(), nn.Linear(48, 2))
    for value, words in (("9" * 400, "below 2**63 bytes"), (-3, "above 0, not -3")):
        with pytest.raises(SpecError, match=re.escape(words)):
            attribute(net, x, "ig", 0, options={"max_memory": value})


class Exp(nn.Module):
    """Class 0 scores sum(exp(x)) (test_integrated_auto's): the trapezoid's gap on n intervals falls as 1/n^2."""

    def forward(self, x):
        s = torch.exp(x.double()).sum(dim=(1, 2, 3))[:, None]
        return torch.cat([s, 0.5 * s], dim=1)


X = torch.linspace(-1.0, 2.0, 12, dtype=torch.float64).reshape(1, 3, 2, 2)


@pytest.mark.parametrize("most, reached, following", [(512, 257, 513), (20, 17, 33), (8, 5, 9)])
def test_steps_auto_stopped_by_max_steps_says_the_points_it_could_reach(most, reached, following):
    """A tolerance of 1e-12 is never met (the gap at 257 points is about 1e-5 of |f(x) - f(0)|): the run stops at
    the last level within max_steps, 4 * 2**k + 1 points, and says so with the next level's count."""
    found = attribute(Exp().double(), X, "ig", 0, options={"steps": "auto", "tolerance": 1e-12, "max_steps": most})
    assert found.settings["steps"] == reached
    x = X.numpy()[0]
    delta = float(np.exp(x).sum() - x.size)
    assert found.notes[-1] == (
        f"steps auto stopped at {reached} points with the gap {found.completeness_gap:.3g} above the tolerance's "
        f"{1e-12 * delta:.3g}: its levels take 5, 9, 17, 33, ... points, and the next, {following}, would pass "
        f"max_steps {most}.")


def test_steps_auto_within_the_tolerance_says_nothing_more():
    found = attribute(Exp().double(), X, "ig", 0, options={"steps": "auto", "tolerance": 1e-2, "max_steps": 512})
    assert found.settings["steps"] == 9 and not any("steps auto stopped" in note for note in found.notes)


@pytest.mark.parametrize("sign, words", [
    ("negative", "pixels in raster order (row by row): the map has no negative value to rank them by"),
    ("positive", "pixels in raster order (row by row): the map has no positive value to rank them by"),
    ("absolute", "pixels in raster order (row by row): the map is 0 everywhere"),
])
def test_scores_of_a_map_without_the_sign_asked_say_the_raster_order(sign, words):
    """A 2 x 2 input; the model's class-0 probability is the pixel values' weighted sum, so raster order is
    checked by the deletion curve itself: pixel 0 (weight 4) goes first, then 1 (3), 2 (2), 3 (1)."""
    net = nn.Sequential(nn.Flatten(), nn.Linear(4, 2, bias=False))
    with torch.no_grad():
        net[1].weight.copy_(torch.tensor([[4.0, 3.0, 2.0, 1.0], [0.0, 0.0, 0.0, 0.0]]))
    x = torch.ones(1, 1, 2, 2)
    m = {"negative": np.array([[0.0, 1.0], [2.0, 3.0]]), "positive": -np.array([[0.0, 1.0], [2.0, 3.0]]),
         "absolute": np.zeros((2, 2))}[sign]
    curve = faithfulness(net, x, m, 0, metrics=("deletion",), steps=4, sign=sign)["deletion"]
    assert curve.order == words
    logits = [10.0 - sum((4.0, 3.0, 2.0, 1.0)[:k]) for k in range(5)]  # the first k pixels replaced by 0
    np.testing.assert_allclose(curve.scores, [1 / (1 + np.exp(-v)) for v in logits], rtol=1e-12)


def test_scores_of_a_map_with_the_sign_asked_keep_their_words():
    net = nn.Sequential(nn.Flatten(), nn.Linear(4, 2))
    curve = faithfulness(net, torch.ones(1, 1, 2, 2), np.array([[0.0, -1.0], [0.0, 0.0]]), 0,
                         metrics=("deletion",), steps=4, sign="negative")["deletion"]
    assert curve.order == "pixels by negative value, most negative first"
