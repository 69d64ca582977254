"""The random-logit check (sanity.random_logit, issue 55 item 3): the other class is drawn from the seed among
the classes other than the target, its map is the method's map of that class, their similarity is Spearman's
and SSIM as scipy and scikit-image compute them, and what cannot be checked is a one-line error first."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr
from skimage.metrics import structural_similarity
from torch import nn

from inspector.core.attribution import attribute
from inspector.core.attribution.sanity.random_logit import other_class, random_logit
from inspector.core.common.errors import RunCancelled, SpecError

X = torch.rand(1, 3, 10, 10, generator=torch.Generator().manual_seed(0))


def test_the_other_class_is_any_class_but_the_target():
    drawn = {other_class(2, 5, seed) for seed in range(200)}
    assert drawn == {0, 1, 3, 4}
    assert other_class(2, 5, 17) == other_class(2, 5, 17)


@pytest.mark.numeric
def test_the_other_map_and_its_similarity(small_net):
    found = random_logit(small_net, X, "saliency", target=1, seed=5)
    assert found.target_index == 1 and found.other_index != 1 and not found.seed_drawn
    assert np.array_equal(found.map, attribute(small_net, X, "saliency", 1).map)
    assert np.array_equal(found.other_map, attribute(small_net, X, "saliency", found.other_index).map)
    a, b = np.abs(found.map), np.abs(found.other_map)
    assert found.similarity.spearman_abs == pytest.approx(spearmanr(a.ravel(), b.ravel()).statistic, abs=1e-6)
    assert found.similarity.ssim == pytest.approx(structural_similarity(a / a.max(), b / b.max(), data_range=1.0),
                                                  abs=1e-6)
    again = random_logit(small_net, X, "saliency", target=1, seed=5)
    assert again.other_index == found.other_index and np.array_equal(again.other_map, found.other_map)
    drawn = random_logit(small_net, X, "saliency")
    assert drawn.seed_drawn and random_logit(small_net, X, "saliency", seed=drawn.seed).other_index == drawn.other_index
    assert drawn.as_json()["other_index"] == drawn.other_index


def test_top1_is_the_predicted_class(small_net):
    found = random_logit(small_net, X, "gradcam", seed=0)
    assert found.target_index == int(small_net(X).argmax())


def test_progress_and_cancel(small_net):
    seen = []
    random_logit(small_net, X, "saliency", seed=0, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 2), (2, 2)]
    with pytest.raises(RunCancelled, match="^Random-logit cancelled.$"):
        random_logit(small_net, X, "saliency", seed=0, cancel=lambda: len(seen) >= 3,
                     progress=lambda done, total: seen.append(done))


class Refuses(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 2)

    def forward(self, x):
        raise AssertionError("the model was run")


@pytest.mark.parametrize("method, target, words", [
    ("eigencam", None, "eigencam explains no class, so there is no other class to compare it with"),
    ("saliency", "sum", "Random-logit compares the maps of two classes; the target 'sum' is no class"),
    ("saliency", "seg:1", "Random-logit compares the maps of two classes; the target 'seg:1' is no class"),
])
def test_what_cannot_be_checked_is_refused_before_any_model_work(method, target, words):
    with pytest.raises(SpecError) as caught:
        random_logit(Refuses(), X, method, target=target)
    assert str(caught.value).startswith(words) and "\n" not in str(caught.value)


def test_a_model_with_one_class_is_refused():
    torch.manual_seed(0)
    one = nn.Sequential(nn.Conv2d(3, 2, 3), nn.Flatten(), nn.LazyLinear(1)).eval()
    one(X)
    with pytest.raises(SpecError, match=r"output \(shape \(1, 1\)\) has fewer than 2 classes"):
        random_logit(one, X, "saliency")
