"""TensorPanel: one mosaic image with explicit levels, hover and click by channel, bars, tokens,
a fresh panel for each key, and an explanatory message when there is nothing to show."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPointF, Qt

from inspector.core.pictures.mosaic import as_maps, levels, make_mosaic
from inspector.gui.views.tensor_panel import TensorPanel


@pytest.fixture(scope="module")
def conv_maps() -> np.ndarray:
    rng = np.random.default_rng(0)
    maps = rng.random((1, 64, 112, 112), dtype=np.float32)
    maps += np.arange(64, dtype=np.float32)[None, :, None, None]  # each channel its own range
    return maps


def image_items(panel: TensorPanel) -> list:
    return [item for item in panel.view.addedItems if isinstance(item, pg.ImageItem)]


def scene_point(panel: TensorPanel, channel: int, y: int, x: int):
    """Where pixel (y, x) of `channel` lies in the panel's scene."""
    m = panel.mosaic
    row, col = divmod(channel, m.cols)
    image_row = row * (m.tile_h + m.gap) + y + 0.5
    image_col = col * (m.tile_w + m.gap) + x + 0.5
    assert m.channel_at(image_row, image_col) == (channel, y, x)
    return panel.view.mapViewToScene(QPointF(image_col, image_row))


def test_conv_capture_is_one_mosaic_image_with_explicit_levels(make_panel, conv_maps):
    panel = make_panel()
    panel.show_capture("layer1.0.conv1:output", conv_maps, None)
    assert len(image_items(panel)) == 1
    assert panel.stack.currentWidget() is panel.canvas
    mosaic = panel.mosaic
    assert (mosaic.rows, mosaic.cols, mosaic.channels) == (8, 8, 64)
    assert (mosaic.tile_h, mosaic.tile_w) == (112, 112)
    expected = make_mosaic(conv_maps)
    assert panel.image.image.shape == (8 * 119 - 7, 8 * 119 - 7)  # tiles 112 + 7 (a sixteenth) apart
    np.testing.assert_array_equal(panel.image.image, expected.image)
    assert panel.image.image.flags["C_CONTIGUOUS"] and panel.image.image.dtype == np.float32
    lo, hi = levels(as_maps(conv_maps), diverging=False)  # one set of levels for every page
    assert tuple(panel.image.levels) == pytest.approx((lo, hi))
    assert panel.colorbar.levels() == pytest.approx((lo, hi))
    assert not panel.pager.isVisible()  # 64 channels fit on one page
    assert panel.title.text() == "<b>layer1.0.conv1:output</b>"
    counts = panel.hist_curve.getData()[1]
    assert counts.sum() > 0
    panel.show_capture("layer1.0.conv1:output", conv_maps[:, :16], None)  # a second update reuses the item
    assert len(image_items(panel)) == 1
    assert panel.mosaic.channels == 16


def test_hover_names_the_channel_and_value(qtbot, make_panel, conv_maps):
    panel = make_panel()
    panel.show_capture("x:output", conv_maps, None)
    for channel, y, x in [(0, 0, 0), (10, 50, 60), (63, 111, 111), (37, 3, 100)]:
        panel._on_mouse_moved(scene_point(panel, channel, y, x))
        value = float(conv_maps[0, channel, y, x])
        assert panel.hover.text() == f"channel {channel}   y {y}, x {x}   value {value:.5g}"
    # a real mouse move over the canvas goes through the scene's signal
    point = scene_point(panel, 21, 40, 40)
    widget_pos = panel.canvas.mapFromScene(point)
    qtbot.mouseMove(panel.canvas.viewport(), widget_pos)
    qtbot.waitUntil(lambda: panel.hover.text().startswith("channel 21 "), timeout=2000)


def test_click_emits_the_channel_and_zooms_it(qtbot, make_panel, conv_maps):
    panel = make_panel()
    panel.show_capture("x:output", conv_maps, None)

    class FakeClick:
        def __init__(self, pos):
            self._pos = pos

        def scenePos(self):
            return self._pos

    with qtbot.waitSignal(panel.sigChannelClicked) as blocker:
        panel._on_mouse_clicked(FakeClick(scene_point(panel, 42, 10, 90)))
    assert blocker.args == [42]
    np.testing.assert_array_equal(panel.zoom_image.image, conv_maps[0, 42])
    assert tuple(panel.zoom_image.levels) == pytest.approx(tuple(panel.image.levels))
    # channel 42 is row 5, column 2 of the 8 x 8 grid of 112 x 112 tiles, 1 pixel apart
    rect = panel.highlight.rect()
    assert panel.highlight.isVisible()
    assert (rect.x(), rect.y(), rect.width(), rect.height()) == (2 * 119, 5 * 119, 112, 112)
    tile = conv_maps[0, 42]
    assert panel.zoom.label.text() == (f"x:output · channel\u00a042 · min\u00a0{tile.min():.4g} · max\u00a0{tile.max():.4g}")
    assert panel.zoom.canvas.width() >= 200 and panel.zoom.canvas.height() >= 200

    widget_pos = panel.canvas.mapFromScene(scene_point(panel, 7, 60, 60))
    with qtbot.waitSignal(panel.sigChannelClicked) as blocker:
        qtbot.mouseClick(panel.canvas.viewport(), Qt.LeftButton, pos=widget_pos)
    assert blocker.args == [7]

    gap = scene_point(panel, 0, 0, 111)  # one pixel right of channel 0 is the gap column
    gap.setX(gap.x() + panel.view.mapViewToScene(QPointF(1, 0)).x() - panel.view.mapViewToScene(QPointF(0, 0)).x())
    with qtbot.assertNotEmitted(panel.sigChannelClicked):
        panel._on_mouse_clicked(FakeClick(gap))


def test_zoom_uses_the_panel_colours_and_follows_a_colour_change(make_panel, conv_maps):
    panel = make_panel()
    panel.show_capture("x:output", conv_maps, None)
    viridis = pg.colormap.get("viridis").getLookupTable(nPts=256)
    np.testing.assert_array_equal(panel.image.lut, viridis)
    np.testing.assert_array_equal(panel.zoom_image.lut, viridis)
    panel.colorbar.setColorMap(pg.colormap.get("magma"))
    magma = pg.colormap.get("magma").getLookupTable(nPts=256)
    np.testing.assert_array_equal(panel.zoom_image.lut, magma)
    panel.colorbar.setLevels((5.0, 9.0))  # dragging the colour bar moves the zoom's levels too
    assert tuple(panel.zoom_image.levels) == (5.0, 9.0) and tuple(panel.image.levels) == (5.0, 9.0)


def test_gradient_levels_are_symmetric_around_zero(make_panel):
    panel = make_panel(diverging=True)
    rng = np.random.default_rng(1)
    grads = (rng.standard_normal((1, 32, 28, 28)) * 0.01 + 0.004).astype(np.float32)  # not centred
    panel.show_capture("x:grad_output", grads, None)
    lo, hi = panel.image.levels
    assert lo == pytest.approx(-hi) and hi > 0
    assert panel.colorbar.levels() == pytest.approx((lo, hi))


def test_vector_shows_one_bar_per_feature(make_panel):
    panel = make_panel()
    values = np.linspace(-1, 1, 10, dtype=np.float32)[None]
    panel.show_capture("fc:output", values, None)
    assert panel.stack.currentWidget() is panel.bars
    assert len(panel.bar_item.opts["height"]) == 10
    np.testing.assert_array_equal(panel.bar_item.opts["height"], values[0])
    assert panel.mosaic is None and panel.maps is None
    panel.show_capture("x:output", np.ones((1, 4, 5, 5), np.float32), None)  # and back to a mosaic
    assert panel.stack.currentWidget() is panel.canvas


def test_token_output_is_one_image(make_panel):
    panel = make_panel()
    tokens = np.random.default_rng(2).standard_normal((1, 197, 768)).astype(np.float32)
    panel.show_capture("encoder.layers.encoder_layer_0:output", tokens, None)
    assert panel.stack.currentWidget() is panel.canvas
    assert len(image_items(panel)) == 1
    assert panel.mosaic.channels == 1
    assert panel.image.image.shape == (197, 768)
    np.testing.assert_array_equal(panel.image.image, tokens[0])


def test_clear_empties_the_panel(make_panel, conv_maps):
    panel = make_panel()
    panel.show_capture("x:output", conv_maps, None)
    panel.clear("Nothing here.")
    assert panel.mosaic is None and panel.key == ""
    assert panel.image.image is None
    assert panel.stats.text() == "Nothing here."
    assert panel.stack.currentWidget() is panel.message and panel.message.text() == "Nothing here."


def test_the_same_mosaic_again_keeps_the_users_zoom_and_another_is_fitted(make_panel, conv_maps):
    """A video's next frame (same key, same shape) keeps the view the user zoomed to; another key,
    another page or a cleared panel is fitted to the whole mosaic again (8 x 8 tiles of 112, 7 apart: 945 px)."""
    panel = make_panel()
    panel.show_capture("a:output", conv_maps, None)
    fitted = panel.view.viewRange()
    assert fitted[0][0] <= 0 and fitted[0][1] >= 945
    panel.view.setRange(xRange=(100, 300), yRange=(100, 300), padding=0)
    chosen = panel.view.viewRange()
    panel.zoom.view.setRange(xRange=(10, 20), yRange=(10, 20), padding=0)
    zoomed = panel.zoom.view.viewRange()
    panel.show_capture("a:output", conv_maps * 2, None)
    assert np.allclose(panel.view.viewRange(), chosen) and np.allclose(panel.zoom.view.viewRange(), zoomed)
    panel.show_capture("b:output", conv_maps, None)
    assert np.allclose(panel.view.viewRange(), fitted)
    assert panel.zoom.view.viewRange()[0][1] - panel.zoom.view.viewRange()[0][0] > 100  # the whole tile
    panel.view.setRange(xRange=(100, 300), yRange=(100, 300), padding=0)
    panel.clear()
    panel.show_capture("b:output", conv_maps, None)
    assert np.allclose(panel.view.viewRange(), fitted)


@pytest.mark.parametrize("channels, side", [(16, 112), (64, 56), (256, 7)])
def test_the_lines_between_tiles_stay_on_screen_when_the_mosaic_is_drawn_smaller(make_panel, qtbot, channels, side):
    """Issue 25, item 12: tiles were always 1 pixel apart, so a mosaic of large tiles drawn in a panel of
    the size the app gives it (about 300 x 300) lost some of its lines (16- and 64-channel mosaics looked
    like blocks of different widths). Every gap must cover at least one screen pixel."""
    panel = make_panel()
    panel.resize(320, 640)
    qtbot.wait(50)
    array = np.random.default_rng(0).standard_normal((1, channels, side, side)).astype(np.float32)
    panel.show_capture("x:output", array, None)
    qtbot.wait(50)
    m = panel.mosaic
    pixel_w, pixel_h = panel.view.viewPixelSize()  # image pixels per screen pixel
    assert m.gap / pixel_w >= 1.0 and m.gap / pixel_h >= 1.0, (m.gap, pixel_w, pixel_h)
    # and the geometry stays exact: tile (r, c) starts at r * (side + gap)
    row, col = m.origin(channels - 1)
    np.testing.assert_array_equal(m.image[row: row + side, col: col + side], array[0, channels - 1])
