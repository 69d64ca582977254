"""Issue 26: baselines in the model's input space (what "zero" is after a normalisation), and deletion and
insertion recomputed here from the map by a plain loop."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from inspector.core.attribution.scores.baselines import BASELINES, make_baseline, zero_means
from inspector.core.attribution.scores.faithfulness import auc, faithfulness, pixel_order
from inspector.core.common.errors import SpecError
from inspector.core.sources.preprocess import Preprocess

pytestmark = pytest.mark.numeric

IMAGENET = Preprocess(mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225))


def test_each_baseline_in_the_models_input_space(tmp_path):
    x = torch.randn(1, 3, 20, 30, generator=torch.Generator().manual_seed(0))
    mean = torch.tensor(IMAGENET.mean)[:, None, None]
    std = torch.tensor(IMAGENET.std)[:, None, None]
    made = {name: make_baseline(name, x, IMAGENET, seed=5) for name in BASELINES}
    assert torch.equal(made["zero"].tensor, torch.zeros_like(x))
    assert torch.equal(made["mean"].tensor, torch.zeros_like(x))  # the mean colour, normalised
    torch.testing.assert_close(made["black"].tensor[0], ((0 - mean) / std).expand(3, 20, 30))
    torch.testing.assert_close(made["white"].tensor[0], ((1 - mean) / std).expand(3, 20, 30))
    pixels = made["uniform"].tensor[0] * std + mean  # back before normalisation: uniform in [0, 1]
    assert 0 <= float(pixels.min()) and float(pixels.max()) <= 1 and made["uniform"].seed == 5
    torch.testing.assert_close(make_baseline("uniform", x, IMAGENET, seed=5).tensor, made["uniform"].tensor)
    # blur: a Gaussian of sigma 1.5 (the default is a twentieth of the short side) against scipy-free numpy
    blurred = make_baseline("blur", x, IMAGENET, sigma=1.5)
    assert blurred.sigma == 1.5 and make_baseline("blur", x, IMAGENET).sigma == 1.0
    np.testing.assert_allclose(blurred.tensor[0].numpy(), numpy_blur(x[0].numpy(), 1.5), rtol=1e-4, atol=1e-5)
    # "zero" is the mean colour after a normalisation, black without one
    assert "(124, 116, 104)" in zero_means(IMAGENET) and zero_means(Preprocess()).startswith("black")
    # a file of the input's size; one of another size is refused
    np.save(tmp_path / "b.npy", np.full((1, 3, 20, 30), 0.5, np.float32))
    assert float(make_baseline(str(tmp_path / "b.npy"), x, IMAGENET).tensor.mean()) == 0.5
    np.save(tmp_path / "small.npy", np.zeros((1, 3, 4, 4), np.float32))
    with pytest.raises(SpecError, match="not the input's"):
        make_baseline(str(tmp_path / "small.npy"), x, IMAGENET)
    with pytest.raises(SpecError, match="does not load"):
        make_baseline(str(tmp_path / "missing.png"), x, IMAGENET)
    with pytest.raises(SpecError, match="sigma"):
        make_baseline("blur", x, IMAGENET, sigma=-1.0)


def numpy_blur(image: np.ndarray, sigma: float) -> np.ndarray:
    """A separable Gaussian (kernel 2 * ceil(3 sigma) + 1) with reflected borders, in plain numpy."""
    radius = int(np.ceil(3 * sigma))
    t = np.arange(-radius, radius + 1)
    kernel = np.exp(-0.5 * (t / sigma) ** 2)
    kernel /= kernel.sum()
    padded = np.pad(image, ((0, 0), (radius, radius), (radius, radius)), mode="reflect")
    rows = sum(kernel[i] * padded[:, i:i + image.shape[1], :] for i in range(len(kernel)))
    return sum(kernel[i] * rows[:, :, i:i + image.shape[2]] for i in range(len(kernel)))


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.body = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                  nn.Linear(4, 5))

    def forward(self, x):
        return self.body(x)


def test_deletion_and_insertion_equal_a_recomputation_from_the_map():
    model = Small().eval()
    x = torch.randn(1, 3, 6, 7, generator=torch.Generator().manual_seed(1))
    baseline = torch.randn(1, 3, 6, 7, generator=torch.Generator().manual_seed(2))
    saliency = np.random.default_rng(3).standard_normal((3, 6, 7)).astype(np.float32)
    saliency[:, 0, :2] = 0.0  # ties, broken by pixel index
    steps = 5
    found = faithfulness(model, x, saliency, 4, baseline, steps=steps, batch=4)
    summed = saliency.astype(np.float64).sum(axis=0).reshape(-1)
    order = sorted(range(42), key=lambda p: (-summed[p], p))
    assert list(pixel_order(saliency, (6, 7))) == order
    for metric in ("deletion", "insertion"):
        expected = []
        for i in range(steps + 1):
            chosen = order[: (i * 42) // steps]
            image = (x if metric == "deletion" else baseline).clone()
            for p in chosen:
                image[0, :, p // 7, p % 7] = (baseline if metric == "deletion" else x)[0, :, p // 7, p % 7]
            with torch.no_grad():
                expected.append(float(torch.softmax(model(image).double(), dim=1)[0, 4]))
        np.testing.assert_allclose(found[metric].scores, expected, rtol=1e-6, atol=1e-7)  # float32, batched or not
        trapezoid = (sum(expected) - (expected[0] + expected[-1]) / 2) / steps
        assert found[metric].auc == pytest.approx(trapezoid, rel=1e-6)
        assert found[metric].score_of == "probability of class 4"
    assert auc(np.array([1.0, 0.0])) == 0.5 and auc(np.array([0.0, 1.0, 1.0])) == 0.75


def test_metrics_refuse_a_map_that_does_not_cover_the_input():
    model = Small().eval()
    with pytest.raises(SpecError, match="one value per pixel"):
        faithfulness(model, torch.zeros(1, 3, 6, 7), np.zeros((3, 3)), 0, steps=5)
    with pytest.raises(SpecError, match="Unknown metric"):
        faithfulness(model, torch.zeros(1, 3, 6, 7), np.zeros((6, 7)), 0, metrics=("road",))


def test_the_python_api_makes_and_scores_a_map_as_the_parts_do():
    """Issue 26: `inspector.core.attribute` is the API's one call: the method's options by the CLI's names,
    a baseline by name, and the metrics over it."""
    import inspector.core as core

    model = core.load_model("demo")
    x = core.load_input("sample:star", model.preprocess, model.input_shape)
    found = core.attribute(model, x, "saliency", options={"baseline": "black"}, metrics="deletion,insertion",
                           metric_steps=10)
    black = make_baseline("black", x, model.preprocess).tensor
    curves = faithfulness(model, x, found.map, found.target_index, black, steps=10)
    assert [c.metric for c in found.curves] == ["deletion", "insertion"]
    for curve in found.curves:
        np.testing.assert_allclose(curve.scores, curves[curve.metric].scores, rtol=1e-6, atol=1e-7)
    occluded = core.attribute(model, x, "occlusion", target=3, options={"window": 16, "stride": 8})
    assert dict(occluded.details)["windows"] == 49 and occluded.target_index == 3


def test_options_a_method_does_not_take_or_of_the_wrong_kind_are_one_line_errors():
    import inspector.core as core

    model = core.load_model("demo")
    x = torch.zeros(1, 3, 64, 64)
    for method, options, words in [("ig", {"window": 8}, "ig takes no option 'window'; its options: steps"),
                                   ("occlusion", {"a": 1}, "occlusion takes no option 'a'"),
                                   ("smoothgrad", {"noise": "lots"}, "The smoothgrad option noise is"),
                                   ("ig", {"steps": True}, "The ig option steps is 'auto' or int, not True"),
                                   ("ig", {"max_memory": "lots"}, "A memory size is a number"),
                                   ("saliency", {"steps": 5}, "saliency takes no option 'steps'")]:
        with pytest.raises(SpecError, match=words):
            core.attribute(model, x, method, options=options)
    with pytest.raises(SpecError, match="at most one step a pixel"):
        core.attribute(model, x, "saliency", metrics=["deletion"], metric_steps=10**20)
