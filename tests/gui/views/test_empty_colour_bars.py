"""Issue 41, item 6: no colour bar keeps an old range over an empty view: the Attribution view's bar goes with its
map (another model, another method), the Compare tab's bars go with their row (All off, another model) and come
back with the next drawing."""

from __future__ import annotations

import numpy as np

from inspector.gui.views.compare.grid import CompareGrid


def test_the_compare_grid_shows_a_row_s_bars_only_with_its_images(qtbot):
    grid = CompareGrid()
    qtbot.addWidget(grid)
    assert not any(bar.isVisible() for bar in grid.bars.values())  # nothing drawn yet
    before = np.arange(12, dtype=np.float32).reshape(1, 3, 2, 2)
    assert grid.show_row("activation", "conv:output", before, before * 2)
    assert grid.bars["activation", "shared"].isVisible() and grid.bars["activation", "difference"].isVisible()
    assert not grid.bars["gradient", "shared"].isVisible()
    grid.clear_all()
    assert not any(bar.isVisible() for bar in grid.bars.values())


def test_the_attribution_bar_goes_with_its_map(qtbot, window, ui, gui_files):
    from inspector.core.records.requests import ModelRequest

    view = window.views.attribution
    window.tabs.setCurrentWidget(view)
    assert not view.colorbar.isVisible()
    view.method.setCurrentText("saliency")
    with qtbot.waitSignal(window.state.analysis.sigAttribution, timeout=60_000):
        view.compute.click()
    assert view.colorbar.isVisible()
    window.state.request_model(ModelRequest(ui.source(gui_files, "Wide"), trust=True))
    ui.expect_result(qtbot, window)
    assert view.map is None and not view.colorbar.isVisible()
