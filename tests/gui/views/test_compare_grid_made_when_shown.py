"""Issue 41, item 19 (start-up): the Compare tab's nine views and six colour bars (0.3 s, a third of building the
window) are made when the tab is first shown or drawn into, not while the window is built; what was set on the
grid before (the columns' names) is what the made grid shows."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from inspector.gui.views.compare.grid import COLS, CompareGrid


def test_the_window_starts_without_the_compare_grid_s_views_and_makes_them_on_the_tab(qtbot, window):
    grid = window.views.compare.grid
    assert window.tabs.currentWidget() is not window.views.compare  # the Layer tab is the first shown
    assert not grid.made
    assert not [item for item in grid.scene().items() if isinstance(item, (pg.ViewBox, pg.ColorBarItem))]
    window.tabs.setCurrentWidget(window.views.compare)
    qtbot.waitUntil(lambda: grid.made, timeout=20_000)  # a part a turn (test_compare_grid_made_in_turns)
    assert len(grid.views) == 9 and len(grid.bars) == 6
    assert all(view.isVisible() for view in grid.views.values())
    bars = [item for item in grid.scene().items() if isinstance(item, pg.ColorBarItem)]
    assert sorted(map(id, bars)) == sorted(map(id, grid.bars.values()))  # made once: no second set under them


def test_names_set_before_the_grid_is_made_are_its_headers(qtbot):
    grid = CompareGrid()
    qtbot.addWidget(grid)
    grid.set_names("first", "second")
    grid.clear_all()  # nothing drawn: does not make the views
    assert not grid.made
    assert grid.names_pair() == ("first", "second")
    assert [grid.headers[col].text for col in COLS] == ["first", "second", "difference"]


def test_drawing_into_an_unshown_grid_makes_it_and_links_its_row(qtbot):
    grid = CompareGrid()
    qtbot.addWidget(grid)
    before = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    assert grid.show_row("activation", "conv:output", before, before + 1)
    np.testing.assert_array_equal(grid.images["activation", "difference"].image, np.ones((4, 4), np.float32))
    moved = grid.views["activation", "edited"]
    moved.setRange(xRange=(1, 2), yRange=(1, 2), padding=0)  # pan one (its aspect kept), the row follows
    (x0, x1), (y0, y1) = moved.viewRange()
    assert x0 < 1.5 < x1 and y0 < 1.5 < y1 and x1 - x0 < 2
    for col in COLS:  # each shows the moved view's rectangle, centred (its own aspect widens one side)
        (a0, a1), (b0, b1) = grid.views["activation", col].viewRange()
        assert a0 <= x0 + 1e-6 and x1 - 1e-6 <= a1 and b0 <= y0 + 1e-6 and y1 - 1e-6 <= b1
        np.testing.assert_allclose([(a0 + a1) / 2, (b0 + b1) / 2], [(x0 + x1) / 2, (y0 + y1) / 2])
