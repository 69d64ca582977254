"""TensorPanel: every filter of a weight gradient, pages of channels, the enlarged channel shared
between two panels, a fresh panel on each key, and NaN/Inf spelled out."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt

from inspector.core.engine.stats import TensorStats
from inspector.gui.views.number_format import fmt, format_stats, keep_pairs
from inspector.gui.views.tensor_panel import TensorPanel


class Click:
    def __init__(self, pos):
        self._pos = pos

    def scenePos(self):
        return self._pos


def at(panel: TensorPanel, row: float, col: float):
    """The scene point of image pixel (row, col)'s centre."""
    return panel.view.mapViewToScene(QPointF(col + 0.5, row + 0.5))


def test_conv_weight_gradient_shows_every_filter(make_panel):
    panel = make_panel(diverging=True)
    w = np.random.default_rng(3).standard_normal((64, 3, 7, 7)).astype(np.float32)
    panel.show_capture("conv1.weight:grad", w, None)
    m = panel.mosaic
    assert panel.stack.currentWidget() is panel.canvas
    # each filter is a row of its 3 input kernels (7 x 7, 1 pixel apart): a 7 x 23 tile;
    # 64 such tiles in ceil(sqrt(64 * 7 / 23)) = 5 columns and 13 rows, 2 pixels apart
    assert (m.tile_h, m.tile_w, m.rows, m.cols, m.gap, m.channels) == (7, 23, 13, 5, 2, 64)
    assert panel.image.image.shape == (13 * 9 - 2, 5 * 25 - 2)
    assert np.isfinite(panel.image.image).sum() == w.size  # every weight of every filter is drawn
    # filter 37 is tile (7, 2) at pixel (63, 50); its input kernel 2 starts 16 columns in
    assert panel.image.image[63 + 3, 50 + 16 + 5] == w[37, 2, 3, 5]
    panel._on_mouse_moved(at(panel, 66, 71))
    assert panel.hover.text() == f"filter 37   in 2   y 3, x 5   value {w[37, 2, 3, 5]:.5g}"
    panel._on_mouse_moved(at(panel, 0, 23))  # the gap right of filter 0 is no kernel: nothing is read out
    assert panel.hover.text() == " "


def test_linear_weight_is_one_image_and_bias_all_bars(make_panel):
    panel = make_panel(diverging=True)
    w = np.random.default_rng(4).standard_normal((10, 64)).astype(np.float32)
    panel.show_capture("fc.weight:grad", w, None)
    assert panel.stack.currentWidget() is panel.canvas
    np.testing.assert_array_equal(panel.image.image, w)
    panel._on_mouse_moved(at(panel, 3, 7))
    assert panel.hover.text() == f"out 3   in 7   value {w[3, 7]:.5g}"
    bias = np.arange(-5, 5, dtype=np.float32)
    panel.show_capture("fc.bias:grad", bias, None)
    assert panel.stack.currentWidget() is panel.bars
    np.testing.assert_array_equal(panel.bar_item.opts["height"], bias)


def test_many_channels_are_paged_with_true_indices(qtbot, make_panel):
    panel = make_panel()
    maps = np.arange(600, dtype=np.float32)[None, :, None, None] * np.ones((1, 600, 4, 4), np.float32)
    panel.show_capture("layer4:output", maps, None)
    assert panel.pager.isVisible()
    assert panel.pager.label.text() == "channels 0-255 of 600"
    assert panel.mosaic.channels == 256 and not panel.pager.prev.isEnabled()
    qtbot.mouseClick(panel.pager.next, Qt.LeftButton)
    assert panel.pager.label.text() == "channels 256-511 of 600"
    # 256 tiles of 4 x 4: 16 columns; the first tile of this page is channel 256
    assert panel.mosaic.cols == 16 and panel.image.image[0, 0] == 256.0
    assert panel.image.image[5 * 2, 5 * 3] == 256 + 2 * 16 + 3  # tile (2, 3)
    panel._on_mouse_moved(at(panel, 10, 15))
    assert panel.hover.text() == "channel 291   y 0, x 0   value 291"
    with qtbot.waitSignal(panel.sigChannelClicked) as blocker:
        panel._on_mouse_clicked(Click(at(panel, 10, 15)))
    assert blocker.args == [291]
    qtbot.mouseClick(panel.pager.next, Qt.LeftButton)
    assert panel.pager.label.text() == "channels 512-599 of 600"
    assert panel.mosaic.channels == 88 and not panel.pager.next.isEnabled()
    qtbot.mouseClick(panel.pager.prev, Qt.LeftButton)
    assert panel.mosaic.first == 256


def test_filters_of_a_wide_layer_are_paged(make_panel):
    panel = make_panel(diverging=True)
    w = np.zeros((2048, 8, 1, 1), np.float32)
    w[300, 5, 0, 0] = 1.0
    panel.show_capture("layer4.2.conv3.weight:grad", w, None)
    assert panel.pager.label.text() == "filters 0-255 of 2048"
    panel.zoom_channel(300)  # turns to the page holding filter 300
    assert panel.pager.label.text() == "filters 256-511 of 2048"
    m = panel.mosaic
    row, col = m.origin(300)  # local tile 44: row 2, column 12 of 16 columns of 3 x 3 tiles
    assert (row, col) == (2 * 4, 12 * 4) and (m.tile_h, m.tile_w) == (3, 3)
    assert panel.image.image[row + 1, col + 2] == 1.0  # kernel 5 of a 3 x 3 grid of 1 x 1 kernels: (1, 2)


def test_enlarged_channel_is_linked_between_two_panels(qtbot, make_panel):
    rng = np.random.default_rng(5)
    acts = rng.random((1, 300, 6, 6), dtype=np.float32)
    grads = rng.standard_normal((1, 300, 6, 6)).astype(np.float32)
    act, grad = make_panel(), make_panel(diverging=True)
    act.show_capture("relu:output", acts, None)
    grad.show_capture("relu:grad_output", grads, None)
    act.sigChannelZoomed.connect(grad.zoom_channel)
    grad.sigChannelZoomed.connect(act.zoom_channel)
    m = act.mosaic  # 256 tiles of 6 x 6 in 16 columns; channel 42 is tile (2, 10)
    assert m.origin(42) == (2 * 7, 10 * 7)
    with qtbot.waitSignal(act.sigChannelZoomed) as blocker:
        act._on_mouse_clicked(Click(at(act, 2 * 7 + 1, 10 * 7 + 1)))
    assert blocker.args == [42]
    assert grad.channel == 42
    np.testing.assert_array_equal(grad.zoom_image.image, grads[0, 42])
    rect = grad.highlight.rect()
    assert (rect.x(), rect.y(), rect.width(), rect.height()) == (70, 14, 6, 6)
    assert grad.zoom.label.text().startswith("relu:grad_output · channel\u00a042 · min\u00a0")
    with qtbot.assertNotEmitted(act.sigChannelZoomed):  # a followed zoom does not echo back
        grad.zoom_channel(270)  # on the second page of both
    with qtbot.waitSignal(grad.sigChannelZoomed):
        grad._on_mouse_clicked(Click(at(grad, 0, 0)))  # first tile of grad's page 2: channel 256
    assert act.channel == 256 and act.pager.label.text() == "channels 256-299 of 300"
    np.testing.assert_array_equal(act.zoom_image.image, acts[0, 256])


def test_a_new_key_or_a_missing_capture_leaves_nothing_of_the_last(make_panel):
    panel = make_panel(diverging=True)
    grads = np.random.default_rng(6).standard_normal((1, 8, 5, 5)).astype(np.float32)
    panel.show_capture("conv1:grad_output", grads, None)
    panel._on_mouse_clicked(Click(at(panel, 7, 7)))  # channel 4 (3 columns of 5 x 5 tiles): (1, 1)
    panel._on_mouse_moved(at(panel, 7, 7))
    assert panel.channel == 4 and panel.hover.text().startswith("channel 4 ")
    panel.show_capture("fc:grad_output", np.ones((1, 10), np.float32), None)
    assert panel.hover.text() == " " and panel.zoom.label.text() == " "
    assert panel.zoom_image.image is None and not panel.highlight.isVisible() and not panel.zoom.isVisible()
    panel.show_capture("conv1:grad_output", grads, None)
    panel._on_mouse_clicked(Click(at(panel, 7, 7)))
    panel.show_capture("conv2:grad_output", grads * 2, None)  # a new key starts at channel 0
    assert panel.channel == 0 and panel.hover.text() == " "
    assert panel.zoom.label.text().startswith("conv2:grad_output · channel\u00a00 ")
    panel.show_missing("conv1 has no bias parameter (it has weight).")
    assert panel.title.text() == "<b>Gradient</b>"
    assert panel.stack.currentWidget() is panel.message
    assert panel.message.text() == "conv1 has no bias parameter (it has weight)."
    assert panel.zoom_image.image is None and panel.zoom.label.text() == " "
    assert not panel.details.isVisible() and not panel.stats.isVisible()  # only the message, in the middle
    assert panel.colorbar.levels() == (-1.0, 1.0) and panel.hover.text() == " "


def test_statistics_spell_out_nan_and_inf(make_panel):
    stats = TensorStats((1, 4, 5, 5), "float32", 0.25, 1.5, -2.0, 3.0, 9.0, 0.1, 3, 2)
    text = format_stats(stats)
    assert text.startswith("1×4×5×5 float32   NaN 3  Inf 2 of 100 values   over the 95 finite values:")
    assert "mean 0.25" in text and "zeros 10.0%" in text and "nan" not in text
    bad = TensorStats((2, 3), "float32", 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 6, 0)
    assert format_stats(bad) == "2×3 float32   NaN 6 of 6 values   (no finite values)"
    assert [fmt(v) for v in (float("nan"), float("inf"), -float("inf"), 0.5)] == ["NaN", "Inf", "-Inf", "0.5"]
    panel = make_panel()
    panel.show_capture("x:output", np.full((1, 2, 3, 3), np.nan, np.float32), bad)
    assert panel.stats.text() == keep_pairs(format_stats(bad)) and panel.stats.isVisible()
    # the line wraps between pairs only: within "NaN 6 of 6 values" and "2×3 float32" no break
    assert panel.stats.text() == "2×3\u00a0float32   NaN\u00a06\u00a0of\u00a06\u00a0values   (no\u00a0finite\u00a0values)"
    assert panel.zoom.label.text() == "x:output · channel\u00a00 · no\u00a0finite\u00a0values"


def test_tokens_are_maps_of_the_models_patch_grid(make_panel):
    from inspector.core.records.tokens import TokenGrid

    panel = make_panel()
    panel.set_tokens(TokenGrid(14, 14, prefix=1))
    tokens = np.random.default_rng(3).standard_normal((1, 197, 8)).astype(np.float32)  # ViT: class + 14 x 14
    panel.show_capture("encoder.layers.0:output", tokens, None)
    assert panel.mosaic.total == 8 and (panel.mosaic.tile_h, panel.mosaic.tile_w) == (14, 14)
    np.testing.assert_array_equal(panel.maps[5], tokens[0, 1:, 5].reshape(14, 14))
    assert "tokens on the 14x14 patch grid after 1 prefix token" in panel.title.text()
    m = panel.mosaic
    row, col = m.origin(5)
    panel._on_mouse_moved(panel.view.mapViewToScene(QPointF(col + 2.5, row + 3.5)))
    assert panel.hover.text().startswith("channel 5   y 3, x 2   value ")
    assert panel.hover.text().endswith(f"prefix token {tokens[0, 0, 5]:.5g}")
    panel.show_capture("encoder.layers.0:output", tokens[:, :100], None)  # fits no grid: one image, as before
    assert panel.mosaic.total == 1 and "patch grid" not in panel.title.text()


def test_while_a_video_plays_levels_are_kept_and_the_histogram_waits(make_panel):
    """Live frames: colour levels get 10% room and stay while a frame fits them (no flicker, no
    colour-bar repaint); the histogram is redrawn at most every `histogram_every_s`."""
    panel = make_panel()
    ramp = np.linspace(0, 10, 8 * 6 * 6, dtype=np.float32).reshape(1, 8, 6, 6)
    lo, hi = np.percentile(ramp, [0.5, 99.5])
    panel.histogram_every_s = 60.0
    panel.show_capture("conv:output", ramp, None)
    assert panel._levels == pytest.approx((lo - 0.1 * (hi - lo), hi + 0.1 * (hi - lo)))
    first = panel._levels
    counts = panel.hist.curve.getData()[1].copy()
    panel.show_capture("conv:output", ramp * 0.9 + 0.5, None)  # fits: kept
    assert panel._levels == first and panel.colorbar.levels() == pytest.approx(first)
    np.testing.assert_array_equal(panel.hist.curve.getData()[1], counts)  # not redrawn within 60 s
    panel.show_capture("conv:output", ramp * 3, None)  # does not fit: new levels with room
    lo3, hi3 = np.percentile(ramp * 3, [0.5, 99.5])
    assert panel._levels == pytest.approx((lo3 - 0.1 * (hi3 - lo3), hi3 + 0.1 * (hi3 - lo3)))
    panel.histogram_every_s = 0.0  # paused: exact levels and the histogram of every frame
    panel.show_capture("conv:output", ramp, None)
    assert panel._levels == pytest.approx((lo, hi))
    np.testing.assert_array_equal(panel.hist.curve.getData()[1], np.histogram(ramp.reshape(-1), bins=64)[0])
