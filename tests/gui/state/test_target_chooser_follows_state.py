"""Issue 41, item 5's rule (nothing in the choosers may say what the panels do not show): the Target chooser
shows the target the runs explain whoever chose it; a target set from code (a session's, the screenshot script's,
a controller's) left it reading the old one."""

from __future__ import annotations


def test_a_target_set_from_code_is_what_the_chooser_shows_and_the_next_run_explains(qtbot, window, ui):
    combo = window.target_combo
    assert combo.target() == "auto"
    window.state.set_target("sum")
    assert combo.target() == "sum" and combo.currentText() == "sum of output"
    outcome = ui.expect_result(qtbot, window)
    assert outcome.result.target == "sum"  # the run explains what the chooser says
    window.state.set_target("auto")
    assert combo.target() == "auto"
