"""Issue 52, item 8 (every GUI row within 50 ms): what was taken out of the turns that draw a result.

- A mosaic's NaN gaps are found at render by their mask, not by `nonzero()` on it: the rendered picture is the
  same as pyqtgraph's own ImageItem's, pixel for pixel (gaps, NaN maps, no NaN, levels changed after).
- A colour bar's "all <value>" check decides from a sample when the sample already holds two values, and
  answers as the whole scan does in every case (one odd value outside the sample included).
- On the Layer tab the result is shown (the worker told to go on) in the turn after the gradient's details are
  painted, with no further timer behind it.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest

from inspector.core.pictures.mosaic import mosaic_of
from inspector.gui.views.colour_bar import constant_value
from inspector.gui.views.mosaic_image import MosaicImage


def _rendered(item: pg.ImageItem, image: np.ndarray, levels) -> bytes:
    item.setImage(image, levels=levels, autoLevels=False)
    item.setColorMap(pg.colormap.get("CET-D1"))
    item.render()
    q = item.qimage
    return bytes(q.constBits()[: q.sizeInBytes()]), (q.width(), q.height(), q.format())


def _images():
    rng = np.random.default_rng(0)
    maps = rng.standard_normal((61, 23, 17), dtype=np.float32)  # a last row of tiles part empty
    gaps = mosaic_of(maps).image
    holes = maps.copy()
    holes[3, 4:9, 2] = np.nan  # NaN inside a map as well as between them
    full = rng.standard_normal((40, 50), dtype=np.float32)  # no NaN at all
    nothing = np.full((8, 9), np.nan, dtype=np.float32)
    return {"gaps": gaps, "holes": mosaic_of(holes).image, "no nan": full, "all nan": nothing}


@pytest.mark.parametrize("name", ["gaps", "holes", "no nan", "all nan"])
def test_a_mosaic_renders_as_pyqtgraph_renders_it(qapp, name):
    image = _images()[name]
    ours, theirs = MosaicImage(axisOrder="row-major"), pg.ImageItem(axisOrder="row-major")
    for levels in ((-1.0, 1.0), (-0.2, 2.5)):  # and again with the levels changed (the bar dragged)
        assert _rendered(ours, image, levels) == _rendered(theirs, image, levels)
        ours.setLevels((0.0, 0.5))
        theirs.setLevels((0.0, 0.5))
        ours.render()
        theirs.render()
        assert bytes(ours.qimage.constBits()) == bytes(theirs.qimage.constBits())


def test_the_gaps_are_found_by_their_mask(qapp):
    image = _images()["gaps"]
    item = MosaicImage(axisOrder="row-major")
    item.setImage(image, levels=(-1, 1), autoLevels=False)
    item.render()
    assert item._imageHasNans and item._imageNanLocations.dtype == bool
    np.testing.assert_array_equal(item._imageNanLocations, np.isnan(image))


@pytest.mark.parametrize("case", ["varied", "constant", "constant with nan and inf", "one odd value",
                                  "all nan", "small", "channels last"])
def test_the_constant_check_answers_as_the_whole_scan(case):
    rng = np.random.default_rng(1)
    values = {
        "varied": rng.standard_normal((64, 30, 30), dtype=np.float32),
        "constant": np.zeros((64, 30, 30), dtype=np.float32),
        "all nan": np.full((64, 30, 30), np.nan, dtype=np.float32),
        "small": np.array([[1.0, 1.0], [np.nan, 1.0]], dtype=np.float32),
    }.get(case)
    if case == "constant with nan and inf":
        values = np.full((64, 30, 30), 2.5, dtype=np.float32)
        values[0, 0, :5] = np.nan
        values[5, 3, 3] = np.inf
    if case == "one odd value":  # constant in any sample, not in the whole
        values = np.zeros((64, 30, 30), dtype=np.float32)
        values[17, 11, 13] = 1e-6
    if case == "channels last":  # a transposed view, not contiguous
        values = np.ascontiguousarray(rng.standard_normal((30, 30, 64), dtype=np.float32)).transpose(2, 0, 1)
    finite = values[np.isfinite(values)]
    whole = None if finite.size == 0 or finite.min() != finite.max() else float(finite.min())
    assert constant_value(values) == whole


def test_the_layer_tab_result_is_shown_the_turn_after_the_last_paint(qtbot, window, monkeypatch):
    import inspector.gui.window.main_window as main_window

    steps = []
    monkeypatch.setattr(main_window, "after_paint", lambda _owner, step: steps.append(step))
    shown = []
    window.sigResultShown.connect(shown.append)
    try:
        assert window.state.view == "layer"
        window.state.sigResult.emit(window.state.outcome)
        turns = 0
        while steps and not shown:
            steps.pop(0)()
            turns += 1
        # activations' details, gradients' maps, gradients' details, shown: no timer after the last of them
        assert shown == [window.state.outcome] and turns == 4 and not steps
    finally:
        window.sigResultShown.disconnect(shown.append)


def test_a_model_loaded_is_laid_out_before_its_turn_is_painted(qtbot, window, monkeypatch):
    """What the load changed in the window's layout is laid out when its handler returns, so the turn's paint is
    at the final sizes (left to the event loop, the panels were painted, laid out and painted again: three times
    in one turn once vit_b_16 loaded)."""
    panel = window.activation_panel
    panel.set_click_mode("A click on a channel here does something.")
    qtbot.wait(50)
    before = panel.stack.height()
    real = window.set_layouts

    def set_layouts(layouts):  # a change to the layout in the middle of the load: the line over the maps grows
        real(layouts)
        panel.click_mode.setText("A click on a channel here does something.\nOver\nfour\nlines.")

    monkeypatch.setattr(window, "set_layouts", set_layouts)
    try:
        window._on_loaded(window.loaded, set(window.layer_model.ticked()))
        at_return = panel.stack.height()
        qtbot.wait(100)  # the event loop: any layout still pending is done now
        assert at_return == panel.stack.height() < before
    finally:
        panel.set_click_mode(None)
