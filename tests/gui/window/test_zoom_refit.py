"""Issue 41, item 3: the enlarged channel's zoom survives a map of the same size (a video's next frame) and a map
of another size fits the view: a 7 x 7 tile after a wheel-zoomed 112 x 112 one, laid over the input with a pixel
marked, filled about 6% of the view (the old marker and the input stretched to the old size were fitted too)."""

from __future__ import annotations

import numpy as np

from inspector.gui.views.channel_zoom import ChannelZoom


def _span(zoom: ChannelZoom) -> tuple[float, float]:
    (x0, x1), (y0, y1) = zoom.view.viewRange()
    return x1 - x0, y1 - y0


def test_a_tile_of_another_size_fits_and_one_of_the_same_size_keeps_the_zoom(qtbot):
    zoom = ChannelZoom()
    qtbot.addWidget(zoom)
    zoom.resize(300, 300)
    zoom.show()
    qtbot.waitExposed(zoom)
    rng = np.random.default_rng(0)
    zoom.show_tile(rng.random((112, 112)), (0, 1), "conv1 channel 0", spatial=True)
    zoom.set_backdrop(np.zeros((64, 64, 3), np.uint8))
    zoom.on_input.setChecked(True)
    zoom.mark((100, 100))
    zoom.view.setRange(xRange=(40, 50), yRange=(40, 50), padding=0)  # as a wheel zoom leaves it
    zoom.show_tile(rng.random((112, 112)), (0, 1), "the next frame", spatial=True)
    assert max(_span(zoom)) < 12  # the same size: the zoom stays
    zoom.show_tile(rng.random((7, 7)), (0, 1), "layer4.2.conv3 channel 0", spatial=True)
    width, height = _span(zoom)
    # fitted with 2% padding; the locked aspect may widen one side to the view's shape, never past twice
    assert 7 <= min(width, height) <= 7 * 1.05 and max(width, height) <= 14, (width, height)
