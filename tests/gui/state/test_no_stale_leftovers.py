"""Issue 25, item 7: nothing stale stays on screen — an attribution map after an error or another model,
a hover readout after a re-run, a layer choice a method does not use, a run's error above working panels."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF

from inspector.core.records.requests import ModelRequest


def test_an_error_takes_the_last_map_down_and_a_new_method_computes_at_once(qtbot, window):
    view = window.views.attribution
    window.tabs.setCurrentWidget(view)
    with qtbot.waitSignal(window.state.analysis.sigAttribution, timeout=30_000):
        view.method.setCurrentText("guided-gradcam")
        view.compute.click()
    assert view.heat.image is not None and view.caption.text().startswith("guided-gradcam for")
    with qtbot.waitSignal(window.state.analysis.sigAttributionFailed, timeout=30_000):
        view.method.setCurrentText("rollout")  # on a CNN: an error, computed without pressing Compute
    assert "Attention rollout" in view.caption.text()
    assert view.heat.image is None and view.picture.image is None and view.map is None
    with qtbot.waitSignal(window.state.analysis.sigAttribution, timeout=30_000):
        view.method.setCurrentText("saliency")
    assert view.caption.text().startswith("saliency for") and view.values.shape == (32, 32)


def test_the_layer_and_class_choices_say_when_a_method_does_not_use_them(qtbot, window, ui, gui_files):
    view = window.views.attribution
    view.method.setCurrentText("saliency")
    assert not view.layer.isEnabled() and view.layer.currentText() == "not used"
    view.method.setCurrentText("gradcam")
    assert view.layer.isEnabled() and view.layer.currentText() == "auto (the map the head reads)"
    view.method.setCurrentText("rollout")
    assert not view.target.isEnabled() and view.target.currentText() == "(no class: class-agnostic)"
    window.state.request_model(ModelRequest(ui.source(gui_files, "TinyViT"), trust=True))
    ui.expect_result(qtbot, window)
    view.method.setCurrentText("gradcam")
    assert view.layer.currentText() == "auto (last block's first norm)"


def test_another_model_takes_the_last_ones_map_away(qtbot, window, ui, gui_files):
    view = window.views.attribution
    with qtbot.waitSignal(window.state.analysis.sigAttribution, timeout=30_000):
        view.method.setCurrentText("saliency")
        view.compute.click()
    assert view.map is not None
    window.state.request_model(ModelRequest(ui.source(gui_files, "Wide"), trust=True))
    ui.expect_result(qtbot, window)
    assert view.map is None and view.heat.image is None and view.caption.text() == "Pick a method and press Compute."


def test_the_hover_readout_follows_a_rerun_under_a_still_mouse(qtbot, make_panel):
    panel = make_panel()
    first = np.arange(2 * 4 * 4, dtype=np.float32).reshape(1, 2, 4, 4)
    panel.show_capture("conv:output", first, None)
    qtbot.wait(50)  # the view takes its range
    row, col = panel.mosaic.origin(1)
    scene = panel.view.mapViewToScene(QPointF(col + 2.5, row + 1.5))  # channel 1, y 1, x 2
    panel._on_mouse_moved(scene)
    assert panel.hover.text() == "channel 1   y 1, x 2   value 22"
    panel.show_capture("conv:output", first * 10, None)  # the same layer after a re-run
    assert panel.hover.text() == "channel 1   y 1, x 2   value 220"


def test_a_runs_error_goes_once_a_run_works(ui, qtbot, open_window, gui_files, image_file):
    window = open_window(ui.source(gui_files, "Fussy"), image_file, expect="failure")
    assert window.banner.isVisible() and "Fussy only takes all-zero inputs" in window.banner.text()
    window.state.set_input(str(gui_files / "zeros.npy"))
    ui.expect_result(qtbot, window)
    assert not window.banner.isVisible()


def test_the_readout_ends_when_the_mouse_leaves_and_names_y_and_x(qtbot, make_panel):
    """Issue 41, item 4: once the mouse has left the maps no position or value stays on the line (a model switch
    later showed 'channel 1 (18, 10) value -0.62515' under an enlarged channel 0), the other side's readout goes
    too, and the line says which number is y and which x."""
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication

    panel = make_panel()
    told = []
    panel.sigCursor.connect(told.append)
    maps = np.arange(2 * 4 * 6, dtype=np.float32).reshape(1, 2, 4, 6)
    panel.show_capture("conv:output", maps, None)
    qtbot.wait(50)
    row, col = panel.mosaic.origin(1)
    panel._on_mouse_moved(panel.view.mapViewToScene(QPointF(col + 4.5, row + 3.5)))  # channel 1, y 3, x 4
    assert panel.hover.text() == f"channel 1   y 3, x 4   value {int(maps[0, 1, 3, 4])}"  # 24 + 3 * 6 + 4 = 46
    assert told[-1] == (1, 3, 4, (2, 4, 6))
    QApplication.sendEvent(panel.canvas, QEvent(QEvent.Leave))
    assert panel.hover.text() == " " and told[-1] is None
    panel.show_capture("conv:output", maps * 2, None)  # the same layer again (a re-run, another model)
    assert panel.hover.text() == " "
    panel.show_cursor((0, 1, 2, (2, 4, 6)))  # the other side's cursor, then it leaves there
    assert panel.hover.text() == "channel 0   y 1, x 2   value 16   (the other side's cursor)"
    panel.show_cursor(None)
    assert panel.hover.text() == " "
