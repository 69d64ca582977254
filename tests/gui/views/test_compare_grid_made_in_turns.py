"""Issue 52, item 8: the Compare tab shown for the first time makes its grid's nine views and six colour bars a
part an event-loop turn, each painted before the next (made in the one turn that showed the tab they stalled the
window 0.3 s: a detector's Compare tab 288 ms); the grid made in turns is the grid made at once, pixel for pixel."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from inspector.gui.views.compare.grid import COLS, ROWS, CompareGrid


def _parts_in(grid) -> int:
    """The views and colour bars in the grid's layout (a colour bar's own view not counted)."""
    return len([item for item in grid.ci.items if isinstance(item, (pg.ViewBox, pg.ColorBarItem))])


def test_the_compare_tab_first_shown_makes_its_grid_a_view_or_bar_a_turn(qtbot, window):
    grid = window.views.compare.grid
    seen = []  # the views and bars there are as each turn begins
    make_in_turns = grid._make_in_turns

    def turn() -> None:
        seen.append(_parts_in(grid))
        make_in_turns()

    grid._make_in_turns = turn
    window.tabs.setCurrentWidget(window.views.compare)
    # The tab's turn made the column headers and the first row's name; no view, no colour bar yet.
    assert not grid.made and _parts_in(grid) == 0
    labels = [item for item in grid.ci.items if isinstance(item, pg.LabelItem)]
    assert sorted(label.text for label in labels) == sorted([*COLS, ROWS[0]])
    qtbot.waitUntil(lambda: grid.made, timeout=20_000)
    # The tab's turn made the headers; each later turn a view, or a colour bar (made in one turn, laid out in the
    # next), the last the columns' widths too: a row's views and bars are 5 parts of the 15 in 7 turns.
    assert seen == [0] + [5 * r + n for r in range(3) for n in (0, 1, 2, 3, 3, 4, 4)]
    assert _parts_in(grid) == 15 and len(grid.views) == 9 and len(grid.bars) == 6


def _grid(qtbot) -> CompareGrid:
    grid = CompareGrid()
    qtbot.addWidget(grid)
    grid.resize(900, 600)
    return grid


def test_a_grid_made_in_turns_is_the_grid_made_at_once(qtbot):
    at_once, in_turns = _grid(qtbot), _grid(qtbot)
    assert at_once.images and not in_turns.made  # drawn into (or asked for): every part made in this call
    assert at_once.made and _parts_in(at_once) == 15
    at_once.show()
    in_turns.show()
    qtbot.waitExposed(at_once)
    qtbot.waitExposed(in_turns)
    assert not in_turns.made
    qtbot.waitUntil(lambda: in_turns.made, timeout=20_000)
    qtbot.wait(50)  # the last part's layout and paint
    assert at_once.grab().toImage() == in_turns.grab().toImage()
    rng = np.random.default_rng(0)
    before = rng.standard_normal((1, 4, 6, 6)).astype(np.float32)
    for grid in (at_once, in_turns):
        grid.set_names("first", "second")
        grid.show_row("activation", "conv:output", before, before * 2)
        grid.show_row("gradient", "conv:grad_output", before, -before)
    qtbot.wait(50)
    assert [at_once.headers[col].text for col in COLS] == ["first", "second", "difference"]
    assert at_once.grab().toImage() == in_turns.grab().toImage()


def test_names_set_while_the_grid_is_made_are_its_headers(qtbot):
    grid = _grid(qtbot)
    grid.show()
    qtbot.waitExposed(grid)
    assert not grid.made and grid._parts.headers  # the headers made, the views not yet
    grid.set_names("first", "second")
    qtbot.waitUntil(lambda: grid.made, timeout=20_000)
    assert [grid.headers[col].text for col in COLS] == ["first", "second", "difference"]
