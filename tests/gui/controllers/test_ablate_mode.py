"""Issue 41, item 1: Ablate belongs to the model it was turned on for. While it is on, the activation panel says
that a click zeroes a channel (a cross cursor over the maps); another model turns it off and says so once, and a
click on that model's channel then only enlarges it (no edit)."""

from __future__ import annotations

from PySide6.QtCore import Qt


def test_ablate_turns_off_for_another_model_and_says_so(qtbot, window, ui, gui_files):
    from inspector.core.records.requests import ModelRequest

    state, edits = window.state, window.edits
    activation = edits.activation
    assert not activation.click_mode.isVisible() and activation.canvas.cursor().shape() != Qt.CrossCursor
    edits.panel.ablate.setChecked(True)
    assert activation.click_mode.text() == "Ablate is on: a click on a channel zeroes it (again: restores it)"
    assert not activation.click_mode.isHidden() and activation.canvas.cursor().shape() == Qt.CrossCursor
    tiny = state.model.request.source

    state.request_model(ModelRequest(ui.source(gui_files, "Wide"), trust=True))
    ui.expect_result(qtbot, window)
    assert not edits.panel.ablate.isChecked()
    assert activation.click_mode.isHidden() and activation.canvas.cursor().shape() != Qt.CrossCursor
    assert window.banner.text() == (f"Ablate is off: it was on for {tiny}. Tick it again to ablate channels or heads "
                                    f"of this model.")
    layer = state.layer or state.layer_names()[0]
    state.select_layer(layer)
    activation.sigChannelClicked.emit(1)
    assert list(state.edits) == []  # the click looked; it changed nothing
