"""The main window end to end: runs, panels against the core API, ticks, errors, cancel, settings."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QKeySequence

from inspector.core import capture, list_samples, load_input, load_model
from inspector.core.pictures.mosaic import as_maps, make_mosaic
from inspector.core.workbench import ModelRequest

SLOW_TICKS = {"conv", "naps.0", "naps.1", "naps.2", "naps.3", "fc"}


def core_result(model_source: str, input_source: str, layers, target: str):
    """What the headless API returns for the same model, input, layers and target."""
    loaded = load_model(model_source)
    x = load_input(input_source, loaded.preprocess, loaded.input_shape)
    return capture(loaded, x, layers=list(layers), target=target)


def shown_predictions(window) -> list[tuple[str, str, str]]:
    table = window.predictions
    return [tuple(table.item(r, c).text() for c in range(3)) for r in range(table.rowCount())]


def assert_panels_match(window, expected) -> None:
    """For each captured layer, both panels hold exactly the core's arrays."""
    names = [window.layer_combo.itemData(i) for i in range(window.layer_combo.count())]
    assert names == window.layer_model.ticked()
    for name in names:
        window.show_layer(name)
        for panel, site in ((window.activation_panel, "output"), (window.gradient_panel, "grad_output")):
            key = f"{name}:{site}"
            want = expected[key]
            assert panel.key == key
            if want.ndim >= 3:
                np.testing.assert_allclose(panel.maps, as_maps(want), rtol=1e-4, atol=1e-5)
                np.testing.assert_allclose(panel.mosaic.image, make_mosaic(want).image, rtol=1e-4, atol=1e-5,
                                           equal_nan=True)
                np.testing.assert_allclose(panel.image.image, make_mosaic(want).image, rtol=1e-4, atol=1e-5,
                                           equal_nan=True)
            else:
                assert panel.stack.currentWidget() is panel.bars
                np.testing.assert_allclose(panel.bar_item.opts["height"], want[0], rtol=1e-4, atol=1e-5)


@pytest.fixture(params=["tiny", "demo"])
def any_model(request, tiny_source):
    return tiny_source if request.param == "tiny" else "demo"


def test_run_panels_and_predictions_match_core_api(open_window, any_model, image_file):
    window = open_window(any_model, image_file)
    result = window.first_outcome.result
    ticked = window.layer_model.ticked()
    assert ticked, "the default ticks are empty"
    expected = core_result(any_model, image_file, ticked, window.target_combo.target())

    assert set(result.captures) == set(expected.captures)
    assert_panels_match(window, expected)
    rows = shown_predictions(window)
    assert rows == [(f"{p.label} ({p.index})", f"{p.probability:.2%}", f"{p.logit:.3f}")
                    for p in expected.predictions]
    assert len(rows) == 5
    assert window.statusBar().currentMessage().startswith(f"Loaded {any_model}")


def test_demo_first_launch_shows_first_sample(open_window):
    window = open_window(None, None)  # fresh settings: the defaults a new user gets
    assert window.state.model.request.source == "demo"
    assert window.state.input == f"sample:{list_samples()[0]}"
    outcome = window.first_outcome
    assert outcome.result.predictions
    labels = window.loaded.labels
    assert all(p.label == labels[p.index] for p in outcome.result.predictions)


def captured_layers(outcome) -> set[str]:
    return {c.key.layer for c in outcome.result.captures.values()}


def tick(window, path: str, on: bool) -> None:
    index = window.layer_model.index_of(path)
    assert window.layer_model.setData(index, Qt.Checked if on else Qt.Unchecked, Qt.CheckStateRole)


def test_ticking_changes_the_hooked_set(ui, qtbot, window):
    assert captured_layers(window.first_outcome) == {"features.0", "features.3", "fc"}
    tick(window, "features.0", False)
    tick(window, "features.2", True)  # ReLU(inplace=True)
    outcome = ui.expect_result(qtbot, window)
    assert captured_layers(outcome) == {"features.2", "features.3", "fc"}
    assert set(outcome.result.captures) == {f"{p}:{s}" for p in ("features.2", "features.3", "fc")
                                            for s in ("output", "grad_output")}

    tick(window, "features", True)  # a parent: its whole subtree
    outcome = ui.expect_result(qtbot, window)
    assert captured_layers(outcome) == {"features", "features.0", "features.1", "features.2", "features.3",
                                        "features.4", "fc"}

    window.layer_model.set_ticked(set())
    outcome = ui.expect_result(qtbot, window)
    assert outcome.result.captures == {}
    assert window.layer_combo.count() == 0
    assert window.activation_panel.mosaic is None
    assert "Tick a module" in window.activation_panel.stats.text()


def test_selecting_another_layer_redraws_without_a_run(qtbot, window):
    runs, run_id = window.worker.runs_done, window.state.last_run_id
    assert window.activation_panel.key == "features.0:output"
    view_index = window.proxy.mapFromSource(window.layer_model.index_of("features.3"))
    window.tree_view.setCurrentIndex(view_index)
    assert window.layer_combo.currentData() == "features.3"
    assert window.activation_panel.key == "features.3:output"
    assert window.gradient_panel.key == "features.3:grad_output"
    expected = window.outcome.result["features.3:output"]
    np.testing.assert_array_equal(window.activation_panel.maps, as_maps(expected))

    window.layer_combo.setCurrentIndex(window.layer_combo.findData("features.0"))
    assert window.activation_panel.key == "features.0:output"
    qtbot.wait(400)  # longer than the auto-run debounce
    assert not window.state.timer.isActive()
    assert (window.worker.runs_done, window.state.last_run_id) == (runs, run_id)


def test_linear_output_is_drawn_as_bars(window):
    window.show_layer("fc")
    for panel, site in ((window.activation_panel, "output"), (window.gradient_panel, "grad_output")):
        assert panel.stack.currentWidget() is panel.bars
        heights = panel.bar_item.opts["height"]
        assert len(heights) == 10
        np.testing.assert_allclose(heights, window.outcome.result[f"fc:{site}"][0])
        assert panel.mosaic is None


def test_model_that_raises_shows_a_message_and_the_next_run_works(ui, qtbot, open_window, gui_files, image_file,
                                                                  tiny_source):
    window = open_window(ui.source(gui_files, "Fussy"), image_file, expect="failure")
    message = window.first_failure
    assert "ValueError" in message and "Fussy only takes all-zero inputs" in message
    assert message in window.banner.text()
    assert "error:" in window.hook_log.toPlainText()
    assert window.outcome is None

    window.state.set_input(str(gui_files / "zeros.npy"))  # fix the input
    outcome = ui.expect_result(qtbot, window)
    assert outcome.result.captures

    window.state.set_input(image_file)
    assert "Fussy" in ui.expect_failure(qtbot, window)
    window.state.request_model(ModelRequest(tiny_source))  # fix the model
    outcome = ui.expect_result(qtbot, window)
    assert window.loaded.source == tiny_source
    assert captured_layers(outcome) == {"features.0", "features.3", "fc"}


def test_a_model_that_loads_but_fails_its_first_run_is_not_taken_on(ui, qtbot, window, gui_files, image_file,
                                                                     tiny_source):
    """Issue 25, item 5: Fussy loads (its tree is built on zeros) and raises on the image. The app goes back to
    Tiny at once (the worker kept it: the same module object), with Tiny's tree and ticks, runs it, and Fussy is
    never written to the settings."""
    tiny_module = window.state.worker.bench.loaded.module
    window.state.set_ticks({"features.0", "fc"})
    ui.expect_result(qtbot, window)
    fussy = ui.source(gui_files, "Fussy")
    window.state.request_model(ModelRequest(fussy, trust=True))
    qtbot.waitUntil(lambda: "first run failed" in window.banner.text(), timeout=30_000)
    assert f"{fussy} (" in window.banner.text() and "Fussy only takes all-zero inputs" in window.banner.text()
    assert window.banner.label.text().endswith(f"Back on {tiny_source} ({window.state.model.weights}).")
    assert "in forward" in window.banner.details.toPlainText()  # the model's own traceback, as Details
    outcome = ui.expect_result(qtbot, window)
    assert window.state.model.source == tiny_source and window.state.trying is None
    assert window.state.worker.bench.loaded.module is tiny_module  # kept, not loaded again
    assert captured_layers(outcome) == {"features.0", "fc"} and window.state.ticks == {"features.0", "fc"}
    assert window.settings.value("model/source") == tiny_source
    assert window.model_combo.currentText() == tiny_source
    assert window.banner.notice is not None and "first run failed" in window.banner.text()  # it stays until...
    window.state.request_model(ModelRequest(ui.source(gui_files, "Wide"), trust=True))  # ...another model
    assert window.banner.notice is None and window.banner.isHidden()  # issue 41, item 8: a choice replaced
    # a model that runs is taken on and remembered; nothing of Tiny is kept once it ran
    wide = ui.source(gui_files, "Wide")
    window.state.request_model(ModelRequest(wide, trust=True))
    ui.expect_result(qtbot, window)
    assert window.state.model.source == wide and window.settings.value("model/source") == wide
    assert window.state.worker.bench._previous is None


@pytest.mark.parametrize("name, says", [("broken.png", "not an image"), ("missing.png", "not found")])
def test_bad_input_file_shows_a_clear_message(ui, qtbot, window, gui_files, image_file, name, says):
    bad = str(gui_files / name)
    window.state.set_input(bad)
    message = ui.expect_failure(qtbot, window)
    assert name in message and says in message
    assert "Unexpected" not in message  # a message for people, not a raw exception
    assert message in window.banner.text()
    # Still on what was loaded: the state, the chooser and F5 all use the image that worked.
    assert window.state.input == image_file and window.input_combo.currentText() == image_file
    assert f"Still showing {image_file}" in window.banner.text()
    window.run_action.trigger()
    outcome = ui.expect_result(qtbot, window)
    assert outcome.result.input.shape == (1, 3, 32, 32)
    assert window.settings.value("input") == image_file  # the failed choice was never saved


def wait_busy(qtbot, window) -> None:
    with qtbot.waitSignal(window.worker.sigBusy, timeout=10_000, check_params_cb=lambda busy: busy):
        pass


def test_cancel_stops_a_slow_run_and_the_app_keeps_working(ui, qtbot, open_window, slow_source, image_file):
    window = open_window(slow_source, image_file, ticks=SLOW_TICKS)
    assert window.cancel_action.shortcut() == QKeySequence("Esc")
    runs = window.worker.runs_done
    with qtbot.waitSignal(window.worker.sigBusy, timeout=10_000, check_params_cb=lambda busy: busy):
        window.run_action.trigger()
    qtbot.wait(250)  # inside the naps now
    assert window.cancel_action.isEnabled()
    window.cancel_action.trigger()
    assert ui.expect_failure(qtbot, window) == "Run cancelled."
    assert window.banner.label.text() == "Run cancelled."
    assert window.worker.runs_done == runs  # the run did not complete

    window.state.run()
    outcome = ui.expect_result(qtbot, window)
    assert outcome.run_id == window.state.last_run_id
    assert window.worker.runs_done == runs + 1
    assert captured_layers(outcome) == SLOW_TICKS


def test_closing_mid_run_stops_the_worker(qtbot, open_window, slow_source, image_file):
    window = open_window(slow_source, image_file, ticks=SLOW_TICKS)
    with qtbot.waitSignal(window.worker.sigBusy, timeout=10_000, check_params_cb=lambda busy: busy):
        window.state.run()
    qtbot.wait(200)
    thread = window.worker_thread.thread
    assert thread.isRunning()
    window.close()
    assert thread.isFinished()
    qtbot.wait(50)  # the cancelled run's message arrives at a closed window: no exception


def test_settings_remember_model_input_and_ticks(ui, qtbot, open_window, gui_files, tiny_source, image_file,
                                                 settings_path):
    first = open_window(tiny_source, image_file)
    wide = ui.source(gui_files, "Wide")
    first.open_model_file(str(gui_files / "models.py"), "Wide")
    ui.expect_result(qtbot, first)
    assert first.loaded.source == wide
    other = str(gui_files / "other.png")
    first.state.set_input(other)
    ui.expect_result(qtbot, first)
    first.layer_model.set_ticked({"features.1", "pool"})
    outcome = ui.expect_result(qtbot, first)
    assert captured_layers(outcome) == {"features.1", "pool"}
    first.close()

    again = QSettings(str(settings_path), QSettings.IniFormat)  # read back from the file
    second = open_window(settings_=again)
    assert second.state.model.request.source == wide
    assert second.state.input == other
    assert second.input_combo.currentText() == other
    assert second.layer_model.ticked() == ["features.1", "pool"]
    assert captured_layers(second.first_outcome) == {"features.1", "pool"}
    assert second.first_outcome.result.input.shape == (1, 3, 32, 32)
