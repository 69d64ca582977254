"""The Layer tab's mosaics read a 4-D output's layout from the model (issue 39, item 11, in the app): a
LayerNorm over the channels of an (N, H, W, C) map of 8 x 12 is 5 maps of 8 x 12, not 8 maps of 12 x 5 (the
square-map guess took (1, 8, 12, 5) for channels-first)."""

from __future__ import annotations

import numpy as np


def test_a_non_square_channels_last_output_is_drawn_as_its_channels(qtbot, open_window, gui_files, tmp_path, ui):
    x = tmp_path / "x.npy"
    np.save(x, np.random.default_rng(0).standard_normal((1, 3, 8, 12)).astype(np.float32))
    window = open_window(ui.source(gui_files, "ChannelsLast"), str(x), ticks=["conv", "norm"])
    window.show_layer("norm")
    captured = window.outcome.result["norm:output"]
    assert captured.shape == (1, 8, 12, 5)
    np.testing.assert_array_equal(window.activation_panel.maps, captured[0].transpose(2, 0, 1))  # by hand
    grad = window.outcome.result["norm:grad_output"]
    np.testing.assert_array_equal(window.gradient_panel.maps, grad[0].transpose(2, 0, 1))
    window.show_layer("conv")  # a convolution's (N, C, H, W) stays as it is
    np.testing.assert_array_equal(window.activation_panel.maps, window.outcome.result["conv:output"][0])
