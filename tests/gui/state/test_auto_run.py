"""Issue 25, item 11: auto-run is judged on warm runs only, its switching off is said where it stays
(a warning with a way back, the toolbar switch saying changes wait), and a model loaded while it is
off still runs once, so the panels belong to the model in the tree."""

from __future__ import annotations

from inspector.core.records.requests import ModelRequest
from inspector.gui.state import result_shown as app_state


def test_a_cold_first_run_never_turns_auto_run_off(ui, qtbot, open_window, tiny_source, image_file, gui_files,
                                                   monkeypatch):
    monkeypatch.setattr(app_state, "AUTO_RUN_LIMIT_S", 0.0)  # every run is "slow"
    window = open_window(tiny_source, image_file)  # its first run: cold, not judged
    assert window.state.auto_run and window.auto_run.isChecked()
    window.state.set_target("2")
    ui.expect_result(qtbot, window)  # a warm run: judged
    assert not window.state.auto_run and not window.auto_run.isChecked()
    assert window.banner.isVisible() and "Auto-run turned off" in window.banner.text()
    assert window.banner.action_button.text() == "Turn auto-run back on"
    qtbot.wait(window.banner.timer.interval() + 200 if window.banner.timer.isActive() else 200)
    assert window.banner.isVisible()  # a warning stays until it is read
    window.state.set_target("3")  # nothing runs, and the switch says so
    assert window.auto_run.text() == "Auto-run (off: changes wait for F5)"
    window.state.request_model(ModelRequest(ui.source(gui_files, "Wide"), trust=True))
    outcome = ui.expect_result(qtbot, window)  # loaded with auto-run off: it still runs once
    assert window.state.model.source.endswith(":Wide") and outcome.result.target == "3"
    assert window.auto_run.text() == "Auto-run"
    monkeypatch.setattr(app_state, "AUTO_RUN_LIMIT_S", 60.0)
    window.state.set_target("1")
    assert window.auto_run.text() == "Auto-run (off: changes wait for F5)"
    window.banner.action_button.click()  # back on: the change that waited runs
    outcome = ui.expect_result(qtbot, window)
    assert window.state.auto_run and outcome.result.target == "1" and window.auto_run.text() == "Auto-run"
