"""Cells asked for one at a time (`gui/state/cells.Cells`, Compare all's maps and Check these maps' cards): in order,
each answered only by its own request's id, a stop dropping the rest, ids negative and never reused."""

from __future__ import annotations

from inspector.gui.state.cells import Cells


def test_cells_come_in_order_each_answered_by_its_own_request():
    cells = Cells()
    assert not cells.busy and cells.take() is None and cells.pending == 0
    cells.start([("saliency", "a"), ("gradcam", "b")])
    assert not cells.busy  # started, none asked for yet
    assert cells.take() == "a" and cells.name == "saliency"
    first = cells.new_id()
    assert first == -1 and cells.answers(-1) and not cells.answers(-2)
    assert cells.take() == "b" and cells.name == "gradcam"
    second = cells.new_id()
    assert second == -2 and not cells.answers(first) and cells.answers(second)
    assert cells.take() is None and not cells.busy and not cells.answers(second)  # none left: nothing answers


def test_a_stop_drops_the_rest_and_forget_the_request_in_flight():
    cells = Cells()
    cells.start([("a", 1), ("b", 2), ("c", 3)])
    cells.take()
    cells.new_id()
    cells.stop()
    assert not cells.busy and cells.take() is None and cells.pending == -1
    cells.start([("d", 4)])
    assert cells.take() == 4 and cells.new_id() == -2  # ids go on: an old answer never matches a new request
    cells.forget()
    assert cells.pending == 0 and not cells.busy and not cells.answers(-2)
