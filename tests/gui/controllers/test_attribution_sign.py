"""What is shown is what is scored (issue 39): for each method, the pixels the Attribution tab draws hottest
are exactly the first ones deletion removes, under the method's default sign and under each sign asked for."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from torch import nn

from inspector.core import load_input, load_model
from inspector.core.attribution import attribute
from inspector.core.attribution.scores.faithfulness import scored
from inspector.gui.views.attribution.view import AttributionView

STEPS = 10  # deletion's first step removes 4096 // 10 = 409 of the demo's 64 x 64 pixels


class Recorder(nn.Module):
    """The demo model, keeping every batch of images it is given."""

    def __init__(self, module: nn.Module) -> None:
        super().__init__()
        self.module, self.seen = module, []

    def forward(self, x):
        self.seen.append(x.detach().clone())
        return self.module(x)


@pytest.fixture(scope="module")
def demo():
    model = load_model("demo")
    return model, load_input("sample:star", model.preprocess, model.input_shape)


def first_deleted(model, x, found) -> np.ndarray:
    """The (H, W) mask of the pixels deletion's first step takes away, read from the images the model saw:
    the baseline is x + 1 everywhere, so a deleted pixel is one that equals it."""
    recorder = Recorder(model.module)
    found = dataclasses.replace(found, baseline=None)  # ig's and occlusion's own: x + 1 instead
    scored(recorder, x, found, ("deletion",), STEPS, x + 1.0, batch=STEPS + 1)
    (images,) = [seen for seen in recorder.seen if seen.shape[0] == STEPS + 1]  # the curve's one pass
    return (images[1] == x[0] + 1.0).all(dim=0).numpy()


OPTIONS = {"ig": {"steps": 8}, "occlusion": {"window": 8, "stride": 4}, "smoothgrad": {"samples": 3, "seed": 1},
           "guided": {}, "saliency": {}, "gradcam": {}, "guided-gradcam": {}, "eigencam": {}}


@pytest.mark.parametrize("method", sorted(OPTIONS))
def test_the_hottest_pixels_drawn_are_the_first_deleted(qtbot, demo, method):
    model, x = demo
    found = attribute(model, x, method, options=OPTIONS[method] or None)
    view = AttributionView()
    qtbot.addWidget(view)
    view.show_attribution(np.zeros((64, 64, 3), np.uint8), found, model.labels)
    drawn = np.asarray(view.heat.image, np.float64)
    deleted = first_deleted(model, x, found)
    k = (64 * 64) // STEPS
    assert deleted.sum() == k
    kth = np.sort(drawn.reshape(-1))[::-1][k - 1]  # the k-th hottest value drawn
    # every pixel drawn hotter than the k-th is deleted; none drawn colder is (ties at the k-th either way)
    assert deleted[drawn > kth].all() and not deleted[drawn < kth].any()


def test_occlusion_of_the_star_is_drawn_and_scored_signed(qtbot, demo):
    """The issue's case: occlusion of the star is mostly negative (grey patches raise its logit). Drawn as
    max |value| it showed the background hot while deletion took the star first; now both are the signed map."""
    model, x = demo
    found = attribute(model, x, "occlusion", options={"window": 8, "stride": 4})
    assert found.shown_sign == "signed"
    signed = found.map.sum(axis=0) if found.map.ndim == 3 else found.map
    assert (signed < 0).mean() > 0.5  # mostly negative, as the issue measured
    deleted = first_deleted(model, x, found)
    kth = np.sort(signed.reshape(-1))[::-1][(64 * 64) // STEPS - 1]
    assert deleted[signed > kth].all() and not deleted[signed < kth].any()  # the most positive go first


@pytest.mark.parametrize("sign", ["positive", "negative", "absolute"])
def test_a_sign_asked_for_is_drawn_and_scored(qtbot, demo, sign):
    model, x = demo
    found = attribute(model, x, "ig", options={"steps": 8, "sign": sign})
    assert found.shown_sign == sign
    total = found.map.sum(axis=0)  # the picture by hand: the channel sum, then the sign
    picture = {"positive": np.maximum(total, 0), "negative": np.maximum(-total, 0), "absolute": np.abs(total)}[sign]
    view = AttributionView()
    qtbot.addWidget(view)
    view.show_attribution(None, found, None)
    np.testing.assert_allclose(view.heat.image, picture, rtol=1e-5, atol=1e-7)
    assert f"{sign} values" in view.caption.text()
    deleted = first_deleted(model, x, found)
    kth = np.sort(picture.reshape(-1))[::-1][(64 * 64) // STEPS - 1]
    assert deleted[picture > kth].all() and not deleted[picture < kth].any()
