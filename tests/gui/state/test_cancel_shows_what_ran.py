"""Issue 25, item 6: after Esc, what the choosers say is what the panels show, and a result on screen never
stays with statistics "being worked out" that nothing is working out."""

from __future__ import annotations

import time

import numpy as np
from PIL import Image

from inspector.core.common.errors import RunCancelled
from inspector.gui.views.tensor_panel import STATS_STOPPED


def other_image(folder) -> str:
    path = folder / "other.png"
    Image.fromarray(np.full((40, 48, 3), 90, np.uint8)).save(path)
    return str(path)


def running(qtbot, window):
    """A context: what is done inside it starts a run, and it ends once the worker is inside that run."""
    return qtbot.waitSignal(window.state.sigPhase, timeout=10_000, check_params_cb=lambda p: p.startswith("Running"))


def test_esc_brings_the_choosers_back_to_the_result_on_screen(ui, qtbot, open_window, slow_source, image_file,
                                                              tmp_path):
    window = open_window(slow_source, image_file, ticks=ui.SLOW_TICKS)
    shown = window.outcome
    with running(qtbot, window):
        window.state.set_input(other_image(tmp_path))
        window.state.set_target("3")
    window.cancel_action.trigger()
    assert window.state.input == image_file and window.input_combo.currentText() == image_file
    assert window.state.target == "auto" and window.target_combo.target() == "auto"
    assert ui.expect_failure(qtbot, window) == "Run cancelled."
    assert window.outcome is shown  # the panels still show the first result, and the choosers say so
    window.state.run()  # F5 runs what the choosers say
    outcome = ui.expect_result(qtbot, window)
    np.testing.assert_array_equal(outcome.result.input, shown.result.input)


def test_statistics_a_cancelled_run_stopped_are_worked_out_again(ui, qtbot, open_window, slow_source, image_file):
    """The first result's statistics are stopped by a second run coming; Esc stops that run: they arrive."""
    window = open_window(slow_source, image_file, ticks=ui.SLOW_TICKS)
    window.state.select_layer("conv")
    seen = []

    def second_run_at_once(outcome):  # before the worker gets to the first result's statistics
        if not seen:
            seen.append(outcome)
            window.state.set_target("2")

    window.state.sigResult.connect(second_run_at_once)
    window.state.set_target("1")
    qtbot.waitUntil(lambda: bool(seen), timeout=30_000)
    first = seen[0]
    assert not first.complete  # the other layers' statistics were left for later
    if not window.state.phase.startswith("Running"):
        with running(qtbot, window):
            pass
    window.cancel_action.trigger()
    qtbot.waitUntil(lambda: first.complete and first.analysis is not None, timeout=30_000)
    assert window.outcome is first
    key = "naps.3:output"
    np.testing.assert_allclose(first.result.captures[key].stats.mean, float(first.result[key].mean()), rtol=1e-5)
    window.state.sigResult.disconnect(second_run_at_once)


def test_statistics_esc_itself_stopped_are_said_to_be_stopped(ui, qtbot, open_window, slow_source, image_file,
                                                             monkeypatch):
    window = open_window(slow_source, image_file, ticks=ui.SLOW_TICKS)
    bench = window.worker.bench
    real_finish = bench.finish

    def slow_finish(outcome, cancel=None, diagnose=True):  # statistics that take a while
        until = time.monotonic() + 5
        while time.monotonic() < until:
            if cancel is not None and cancel.is_set():
                raise RunCancelled()
            time.sleep(0.02)
        return real_finish(outcome, cancel, diagnose)

    monkeypatch.setattr(bench, "finish", slow_finish)
    window.state.select_layer("conv")
    window.state.set_target("1")
    outcome = ui.expect_result(qtbot, window)
    qtbot.waitUntil(lambda: window.state.phase.startswith("Statistics"), timeout=10_000)
    window.cancel_action.trigger()
    window.state.select_layer("naps.2")  # a layer whose statistics were not worked out
    window.show_layer()
    assert window.activation_panel.stats.text() == STATS_STOPPED
    window.tabs.setCurrentWidget(window.views.stats)
    qtbot.waitUntil(lambda: window.views.stats.status.text() == STATS_STOPPED, timeout=5_000)
    qtbot.wait(300)
    assert not outcome.complete and window.state.phase == ""
    monkeypatch.setattr(bench, "finish", real_finish)
    window.state.run()  # F5 works them out
    again = ui.expect_result(qtbot, window)
    qtbot.waitUntil(lambda: again.complete, timeout=30_000)
