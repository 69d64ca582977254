"""AttributionView: a colour bar in the map's units, percentile clipping as a control, a wide
opacity slider."""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core.attribution import Attribution
from inspector.gui.views.attribution.view import AttributionView


@pytest.fixture
def view(qtbot):
    v = AttributionView()
    qtbot.addWidget(v)
    v.resize(1000, 700)
    v.show()
    qtbot.waitExposed(v)
    return v


def saliency_with_spikes() -> np.ndarray:
    m = np.tile(np.linspace(0.0, 1.0, 64, dtype=np.float32), (64, 1))  # a ramp 0..1 left to right
    m[10, 10] = m[20, 30] = m[40, 50] = 500.0  # three huge pixels
    return m


def test_huge_pixels_are_clipped_at_the_chosen_percentile(view):
    found = Attribution("saliency", saliency_with_spikes(), "class 3", 3)
    picture = np.zeros((64, 64, 3), np.uint8)
    view.show_attribution(picture, found, None)
    ramp = np.linspace(0.0, 1.0, 64)
    spikes = [10 * 64 + 10, 20 * 64 + 30, 40 * 64 + 50]
    flat = np.sort(np.concatenate([np.delete(np.tile(ramp, 64), spikes), [500.0] * 3]))  # 4093 + 3 values
    p99 = flat[int(0.99 * 4095)] + (0.99 * 4095 % 1) * (flat[int(0.99 * 4095) + 1] - flat[int(0.99 * 4095)])
    assert p99 == pytest.approx(1.0)  # the top of the ramp, not the spikes
    assert view.percentile.value() == 99.0
    assert view.colorbar.levels() == pytest.approx((0.0, p99))
    assert tuple(view.heat.levels) == pytest.approx((0.0, p99))
    # the middle of the ramp is mid-scale, where min..max scaling would have made it ~0.001
    lo, hi = view.heat.levels
    assert (view.values[5, 32] - lo) / (hi - lo) == pytest.approx(32 / 63, abs=1e-4)
    view.percentile.setValue(100.0)  # the control re-levels without recomputing
    assert view.colorbar.levels() == pytest.approx((0.0, 500.0))
    assert tuple(view.heat.levels) == pytest.approx((0.0, 500.0))


def test_guided_maps_are_drawn_signed_on_a_diverging_scale(view):
    m = np.zeros((3, 8, 8), np.float32)
    m[1, 2, 3] = -4.0
    m[0, 5, 5], m[2, 5, 5] = 2.0, 1.0
    view.show_attribution(None, Attribution("guided", m, "target", None), None)
    # the channel sum, sign kept: guided maps are signed (records.signs)
    assert view.values[2, 3] == -4.0 and view.values[5, 5] == 3.0 and view.values[0, 0] == 0.0
    view.percentile.setValue(100.0)
    assert view.colorbar.levels() == pytest.approx((-4.0, 4.0))  # symmetric about 0
    lut = view.heat.lut
    assert lut.shape == (256, 4) and lut[0, 3] == 255 and lut[-1, 3] == 255 and lut[128, 3] < 10  # clear at 0
    assert lut[0, 2] > lut[0, 0] and lut[-1, 0] > lut[-1, 2]  # blue below 0, red above
    assert "signed values" in view.caption.text()


def test_opacity_slider_is_wide_and_sets_the_overlay(qtbot, view):
    assert view.opacity.width() >= 150
    view.opacity.setValue(80)
    assert view.heat.opacity() == pytest.approx(0.8)


def test_a_detectors_curves_read_the_box_score_as_it_is(view):
    """Scores of 0..0.8 read 0..0.8 under "box score", never 0..800 with a "(x0.001)" prefix (issue 39)."""
    from inspector.core.attribution.scores.faithfulness import Curve

    scores = np.array([0.8, 0.5, 0.1])
    curve = Curve("deletion", scores, 0.375, "the score of box:0 (0 where the image lost it)",
                  "pixels by signed value, most positive first")
    found = Attribution("saliency", np.ones((8, 8), np.float32), "box:0", None, curves=(curve,))
    view.show_attribution(None, found, None)
    axis = view.curves.getPlotItem().getAxis("left")
    assert axis.labelText == "box score" and not axis.autoSIPrefix
    assert axis.autoSIPrefixScale == 1.0
    assert "most positive first" in view.curves.getPlotItem().getAxis("bottom").labelText
    _xs, ys = view.curves.lines["deletion"].getData()
    np.testing.assert_array_equal(ys, scores)
