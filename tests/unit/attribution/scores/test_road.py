"""Issue 55 item 2: ROAD (Rong et al., ICML 2022). With noise 0 each point equals pytorch-grad-cam's
ROADMostRelevantFirst / ROADLeastRelevantFirst (their NoisyLinearImputer with noise 0) on the same model and map;
the imputation equals a dense solve of the equations by hand; with noise the curves come back from their seed."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from pytorch_grad_cam.metrics.road import (
    NoisyLinearImputer,
    ROADLeastRelevantFirst,
    ROADMostRelevantFirst,
)
from pytorch_grad_cam.utils.model_targets import ClassifierOutputSoftmaxTarget

from inspector.core import load_input, load_model
from inspector.core.attribution import attribute
from inspector.core.attribution.scores.faithfulness import road, scored
from inspector.core.attribution.scores.road import impute
from inspector.core.common.errors import SpecError
from inspector.core.records.protocols import road_removed

# pytorch-grad-cam's np.float32(list of tensors): numpy 2's warning about torch's __array_wrap__, not ours
pytestmark = pytest.mark.filterwarnings("ignore:__array_wrap__ must accept context:DeprecationWarning")


def dense_imputation(image: np.ndarray, removed: np.ndarray) -> np.ndarray:
    """Each removed pixel the weighted mean of its neighbours inside the image (1/6 direct, 1/12 diagonal), as one
    dense system written pixel by pixel."""
    channels, height, width = image.shape
    unknown = [(y, x) for y in range(height) for x in range(width) if removed[y, x]]
    number = {p: i for i, p in enumerate(unknown)}
    a = np.zeros((len(unknown), len(unknown)))
    b = np.zeros((len(unknown), channels))
    for i, (y, x) in enumerate(unknown):
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                if (dy, dx) == (0, 0) or not (0 <= y + dy < height and 0 <= x + dx < width):
                    continue
                w = 1 / 6 if dy == 0 or dx == 0 else 1 / 12
                a[i, i] += w
                if (y + dy, x + dx) in number:
                    a[i, number[y + dy, x + dx]] -= w
                else:
                    b[i] += w * image[:, y + dy, x + dx]
    out = image.astype(np.float64).copy()
    solved = np.linalg.solve(a, b)
    for i, (y, x) in enumerate(unknown):
        out[:, y, x] = solved[i]
    return out


@pytest.mark.numeric
def test_the_imputation_equals_a_dense_solve_and_grad_cams_imputer():
    rng = np.random.default_rng(0)
    image = torch.from_numpy(rng.standard_normal((3, 9, 11)).astype(np.float32))
    removed = rng.random((9, 11)) < 0.6
    removed[0, 0] = removed[8, 10] = True  # corners: three neighbours inside
    ours = impute(image, removed)
    np.testing.assert_allclose(ours.numpy(), dense_imputation(image.numpy(), removed), rtol=1e-5, atol=1e-6)
    assert torch.equal(ours[:, ~torch.from_numpy(removed)], image[:, ~torch.from_numpy(removed)])  # kept as they were
    theirs = NoisyLinearImputer(noise=0.0)(image, torch.from_numpy((~removed).astype(np.float32)))  # 1: kept
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)
    assert torch.equal(impute(image, np.zeros((9, 11), bool)), image)  # nothing removed: the image


def test_the_pixels_removed_at_each_percentage():
    # 4096 pixels: at or above the (100 - p)th percentile, pixels - ceil((100 - p) / 100 * 4095); the authors' code
    # takes int(4096 * p / 100), one fewer at 10 % (409); 0 % removes none (numpy's 100th percentile is the top one)
    assert [road_removed(4096, p) for p in (0, 10, 20, 50, 90)] == [0, 410, 820, 2048, 3686]
    assert road_removed(11, 10) == 2 and road_removed(11, 99.9) == 10


@pytest.fixture(scope="module")
def demo():
    model = load_model("demo")
    x = load_input("sample:star", model.preprocess, model.input_shape)
    found = attribute(model, x, "saliency")
    # the saliency map's ranks over 4096: the same order, no ties, and 1 - map exact in float32 (grad-cam's LeRF)
    ranks = np.argsort(np.argsort(found.map.reshape(-1), kind="stable"), kind="stable")
    return model, x, found, (ranks.reshape(found.map.shape) / ranks.size).astype(np.float32)


@pytest.mark.numeric
def test_road_without_noise_equals_pytorch_grad_cam(demo):
    model, x, found, ranked = demo
    curves = road(model, x, ranked, found.target_index, noise=0.0, sign="positive")
    targets = [ClassifierOutputSoftmaxTarget(found.target_index)]
    cams = ranked[None]
    with torch.no_grad():
        before = float(torch.softmax(model.module(x), dim=1)[0, found.target_index])
    for name, metric in (("road-morf", ROADMostRelevantFirst), ("road-lerf", ROADLeastRelevantFirst)):
        expected = []
        for p in range(10, 100, 10):
            theirs = metric(percentile=100 - p)  # grad-cam's percentile: the share kept
            theirs.perturbation.imputer.noise = 0.0
            expected.append(float(theirs(x, cams, targets, model.module, return_diff=False)[0]))
            diff = float(theirs(x, cams, targets, model.module)[0])  # its default: the change from the input's
            assert diff == pytest.approx(expected[-1] - before, abs=1e-5)
        np.testing.assert_allclose(curves[name].scores, expected, rtol=0, atol=1e-5)
        e = np.array(expected)  # nine equally spaced points: the trapezoid mean
        assert curves[name].auc == pytest.approx((e.sum() - e[0] / 2 - e[-1] / 2) / 8, abs=1e-5)
    assert curves["road-morf"].auc < curves["road-lerf"].auc  # the saliency map: its top pixels matter more
    assert dict(curves["road-morf"].settings)["seed"] == "none (no noise)"


def test_road_with_noise_comes_back_from_its_seed(demo):
    model, x, found, ranked = demo
    first = road(model, x, ranked, found.target_index, (30, 90), noise=0.05, seed=7, sign="positive")
    again = road(model, x, ranked, found.target_index, (90, 30), noise=0.05, seed=7, sign="positive")
    other = road(model, x, ranked, found.target_index, (30, 90), noise=0.05, seed=8, sign="positive")
    for name in ("road-morf", "road-lerf"):
        assert np.array_equal(first[name].scores, again[name].scores)
        assert not np.array_equal(first[name].scores, other[name].scores)
        assert dict(first[name].settings)["seed"] == 7 and dict(first[name].settings)["noise sigma"] == 0.05
        assert first[name].at == (0.3, 0.9)
    # the noise is the imputation's plus N(0, sigma) at each removed value: its spread measured
    removed = np.zeros(4096, bool)
    removed[np.argsort(-ranked.reshape(-1), kind="stable")[:road_removed(4096, 90)]] = True
    removed = removed.reshape(64, 64)
    noisy = impute(x[0], removed, 0.05, torch.Generator().manual_seed(3)) - impute(x[0], removed)
    assert float(noisy[:, torch.from_numpy(removed)].std()) == pytest.approx(0.05, rel=0.05)
    chosen = scored(model, x, found, ("road",), road_noise=0.01)  # no seed: one is chosen and said
    assert isinstance(dict(chosen.curves[0].settings)["seed"], int)
    assert [c.metric for c in chosen.curves] == ["road-morf", "road-lerf"]


@pytest.mark.parametrize("kwargs, words", [
    ({"noise": -0.1}, "ROAD's noise is a standard deviation, 0 or more, not -0.1."),
    ({"percentages": (10, 150)}, "ROAD's percentages are numbers from 0 to 100, not 150."),
    ({"percentages": (-5,)}, "ROAD's percentages are numbers from 0 to 100, not -5."),
    ({"percentages": (100,)}, "ROAD cannot remove 100 % of the pixels: none would be left to impute them from."),
    ({"percentages": ()}, "ROAD needs at least one percentage of pixels to remove."),
])
def test_bad_road_settings_are_one_line_errors_before_any_pass(demo, kwargs, words):
    model, x, found, ranked = demo
    calls = []
    handle = model.module.register_forward_hook(lambda *_: calls.append(1))
    try:
        with pytest.raises(SpecError) as refused:
            road(model, x, ranked, found.target_index, **kwargs)
    finally:
        handle.remove()
    assert str(refused.value) == words and calls == []
