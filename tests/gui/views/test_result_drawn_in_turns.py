"""Issue 41, item 19 (start-up): a result's panels are drawn over several event-loop turns, each painted before the
next (a first result's two panels took 40-70 ms of the GUI thread a turn): a panel's maps in one turn, its
histogram, statistics and the row under the maps in a later one; what is drawn in the end is unchanged."""

from __future__ import annotations

import numpy as np


def _counts(panel) -> np.ndarray:
    counts = panel.hist_curve.getData()[1]
    return np.zeros(0) if counts is None else counts


def test_the_histograms_follow_the_maps_a_turn_later(qtbot, window):
    act, grad = window.activation_panel, window.gradient_panel
    outcome = window.state.outcome
    assert window.state.view == "layer" and act.key and grad.key
    for panel in (act, grad):
        panel.hist.clear_values()
        panel.stats.setText("-")
    shown = []
    window.sigResultShown.connect(shown.append)
    window.state.sigResult.emit(outcome)
    # The activations' maps are drawn at once; their histogram and statistics wait for a later turn.
    assert act.mosaic is not None and act.maps is not None
    assert len(_counts(act)) == 0 and act.stats.text() == "-"
    assert len(_counts(grad)) == 0 and grad.stats.text() == "-"
    qtbot.waitUntil(lambda: bool(shown), timeout=10_000)
    window.sigResultShown.disconnect(shown.append)
    for panel in (act, grad):
        array = np.asarray(outcome.result.captures[panel.key].array).reshape(-1)
        assert array.size <= 65536  # the histogram of every value (no strided sample)
        counts, edges = np.histogram(array[np.isfinite(array)], bins=64)
        x, y = panel.hist_curve.getData()
        np.testing.assert_array_equal(y, counts)
        np.testing.assert_allclose(x, edges)
        assert panel.stats.text() != "-" and panel.details.isVisible()


def test_a_panel_drawn_again_before_its_histogram_drops_the_stale_one(make_panel):
    panel = make_panel()
    first = np.arange(2 * 4 * 4, dtype=np.float32).reshape(1, 2, 4, 4)
    second = -np.ones((1, 3, 4, 4), dtype=np.float32)
    panel.show_capture("a", first, None, details=False)
    assert len(_counts(panel)) == 0 and not panel.details.isVisible()
    panel.show_capture("b", second, None)  # drawn whole: nothing of "a" is left to draw
    counts = _counts(panel).copy()
    panel.show_details()
    np.testing.assert_array_equal(_counts(panel), counts)
    np.testing.assert_array_equal(counts, np.histogram(second.reshape(-1), bins=64)[0])
    assert panel.details.isVisible()
