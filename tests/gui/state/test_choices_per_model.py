"""Issue 41, item 2: a choice the new model cannot have falls back to the model's default and says so once:
Gradient = attention (per head), then a model with no attention module: the chooser reads grad_output again,
the banner says why, and the panels show the gradient instead of "No attention at ...". A model with attention
keeps the choice."""

from __future__ import annotations


def test_attention_per_head_falls_back_on_a_model_without_attention(qtbot, window, ui, gui_files):
    from inspector.core.records.requests import ModelRequest

    state = window.state
    state.request_model(ModelRequest(ui.source(gui_files, "TinyViT"), trust=True))
    ui.expect_result(qtbot, window)
    window.grad_site_combo.setCurrentText("attention (per head)")
    window.grad_site_combo.activated.emit(window.grad_site_combo.currentIndex())  # as a click on it does
    ui.expect_result(qtbot, window)
    assert state.grad_site == "attention"
    state.request_model(ModelRequest(ui.source(gui_files, "Wide"), trust=True))
    ui.expect_result(qtbot, window)
    assert state.model.attention == ()  # Wide has none: the fallback is what is tested
    assert state.grad_site == "grad_output" and window.grad_site_combo.currentText() == "grad_output"
    source = state.model.request.source
    assert window.banner.text() == (f"Gradient is grad_output again: {source} has no attention module the app "
                                    f"knows, so it has no attention per head.")
    assert state.sites() >= {"grad_output"}
