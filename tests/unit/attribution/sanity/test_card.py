"""The trust card (sanity.card, issue 55 item 5): its numbers are the core's own checks on the same map and seed,
one seed drawn is shared by them all and said, a check the map cannot take is refused in one line while the
others are made, Esc stops it, and a bad protocol is one line before any model work."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from inspector.core.attribution import attribute
from inspector.core.attribution.sanity.card import CHECKS, trust_card
from inspector.core.attribution.sanity.random_logit import random_logit
from inspector.core.attribution.sanity.randomisation import mprt
from inspector.core.attribution.scores.faithfulness import scored
from inspector.core.common.errors import RunCancelled, SpecError

X = torch.rand(1, 3, 10, 10, generator=torch.Generator().manual_seed(0))


@pytest.mark.numeric
def test_the_card_is_each_check_run_directly(small_net):
    card = trust_card(small_net, X, "saliency", target=2, seed=9)
    found = attribute(small_net, X, "saliency", 2)
    expected = scored(small_net, X, found, ("deletion", "insertion", "road"), road_seed=9).curves
    assert [c.metric for c in card.curves] == ["deletion", "insertion", "road-morf", "road-lerf"]
    for got, want in zip(card.curves, expected):
        np.testing.assert_allclose(got.scores, want.scores, atol=1e-7)
    again = mprt(small_net, X, "saliency", 2, seed=9)
    np.testing.assert_array_equal(card.mprt.curve, again.curve)
    assert card.mprt.verdict == again.verdict and card.mprt.mode == "cascading"
    other = random_logit(small_net, X, "saliency", 2, seed=9)
    assert card.random_logit.other_index == other.other_index
    assert card.random_logit.similarity == other.similarity
    assert [c.check for c in card.checked] == list(CHECKS) and not any(c.refused for c in card.checked)
    assert card.as_json()["seed"] == 9 and card.as_json()["mprt"]["seed"] == 9


def test_a_drawn_seed_is_shared_and_said(small_net):
    card = trust_card(small_net, X, "gradcam")
    assert card.seed_drawn and card.mprt.seed == card.random_logit.seed == card.seed
    road = next(c for c in card.curves if c.metric == "road-morf")
    assert dict(road.settings)["seed"] == card.seed


def test_the_map_given_is_the_one_checked(small_net):
    original = attribute(small_net, X, "smoothgrad", options={"samples": 3})
    card = trust_card(small_net, X, "smoothgrad", options={"samples": 3}, seed=1, original=original)
    assert card.mprt.maps[0] is original.map and card.random_logit.map is original.map


def test_a_check_the_map_cannot_take_is_refused_in_one_line_and_the_others_are_made(small_net):
    card = trust_card(small_net, X, "eigencam", seed=0)
    refused = card.of("random-logit").refused
    assert card.random_logit is None and refused.startswith("eigencam explains no class") and "\n" not in refused
    assert card.mprt is not None and card.auc("deletion") is not None and card.auc("road-lerf") is not None


def test_one_class_refuses_random_logit_only():
    torch.manual_seed(0)
    one = nn.Sequential(nn.Conv2d(3, 2, 3), nn.Flatten(), nn.LazyLinear(1)).eval()
    one(X)
    card = trust_card(one, X, "saliency", seed=0)
    assert "fewer than 2 classes" in card.of("random-logit").refused and card.of("MPRT").refused == ""


def test_cancel_stops_the_card(small_net):
    said = []
    with pytest.raises(RunCancelled):
        trust_card(small_net, X, "saliency", seed=0, cancel=lambda: any("MPRT step" in s for s in said),
                   phase=said.append)
    assert not any("random-logit" in s for s in said)


class Refuses(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 2)

    def forward(self, x):
        raise AssertionError("the model was run")


@pytest.mark.parametrize("arguments, words", [
    ({"protocol": "rise"}, "Unknown protocol 'rise'. Protocols: inspector, rise2018."),
    ({"seed": -2}, "The checks' seed must be a whole number"),
    ({"method": "sharpest"}, "Unknown method 'sharpest'"),
])
def test_bad_arguments_are_one_line_before_any_model_work(arguments, words):
    arguments = {"method": "saliency"} | arguments
    with pytest.raises(SpecError) as caught:
        trust_card(Refuses(), X, **arguments)
    assert str(caught.value).startswith(words) and "\n" not in str(caught.value)
