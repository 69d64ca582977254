"""Issue 25, item 10: edits belong to a model. A new model starts with none (the last one's never block
its runs), the last one's come back with it, an edit switched off never stops a run, and every change
to the list can be undone; Delete all empties it."""

from __future__ import annotations

from dataclasses import replace

from inspector.core.edits import parse_edit
from inspector.core.records.requests import ModelRequest


def texts(window) -> list[str]:
    return [str(e) for e in window.views.edits_panel.edits()]


def test_a_new_model_starts_with_no_edits_and_the_last_ones_come_back_with_it(ui, qtbot, window, gui_files,
                                                                               tiny_source):
    editing, panel = window.state.editing, window.views.edits_panel
    assert editing.add_text("features.0:output=scale(2)")
    editing.add_text("features.2:grad_input=clamp(min=0)")
    editing.set_enabled(1, False)
    ui.expect_result(qtbot, window)
    assert panel.message.text() == "added features.2:grad_input=clamp(min=0)"
    window.state.request_model(ModelRequest(ui.source(gui_files, "Slow"), trust=True))  # no features.* at all
    outcome = ui.expect_result(qtbot, window)  # runs: nothing of Tiny's edits is in its way
    assert texts(window) == [] and window.state.edits == () and outcome.result.edits == []
    assert panel.message.text().strip() == ""  # the note about Tiny's edit went with Tiny
    window.state.request_model(ModelRequest(tiny_source))
    outcome = ui.expect_result(qtbot, window)
    assert texts(window) == ["features.0:output=scale(k=2)", "features.2:grad_input=clamp(min=0)"]
    assert [e.enabled for e in window.state.edits] == [True, False]
    assert outcome.result.edits == ["features.0:output=scale(k=2)"]


def test_an_edit_switched_off_never_stops_a_run(ui, qtbot, window):
    window.state.set_edits([replace(parse_edit("relu1:grad_input=clamp(min=0)"), enabled=False)])
    outcome = ui.expect_result(qtbot, window)  # Tiny has no relu1: only an edit that is on would be an error
    assert outcome.result.edits == []


def test_undo_and_delete_all(ui, qtbot, window):
    editing, panel = window.state.editing, window.views.edits_panel
    assert not panel.undo_button.isEnabled()
    editing.add_text("features.0:output=scale(2)")
    editing.add_text("fc:output=scale(3)")
    editing.set_enabled(0, False)
    delete_all = next(b for b in panel.findChildren(type(panel.undo_button)) if b.text() == "Delete all")
    delete_all.click()
    assert texts(window) == []
    panel.undo_button.click()
    assert [(str(e.key), e.enabled) for e in window.state.edits] == [("features.0:output", False), ("fc:output", True)]
    panel.undo_button.click()
    assert [e.enabled for e in window.state.edits] == [True, True]
    panel.undo_button.click()
    panel.undo_button.click()
    assert window.state.edits == () and not panel.undo_button.isEnabled()
    outcome = ui.expect_result(qtbot, window)
    assert outcome.result.edits == []


def test_attention_per_head_offers_to_tick_this_models_own_attention_module(ui, qtbot, window, gui_files):
    """Issue 25, item 13: the hint names the loaded model's attention module (any family) and ticks it."""
    window.state.request_model(ModelRequest(ui.source(gui_files, "TinyViT"), trust=True), ticks={"patch_embed"})
    ui.expect_result(qtbot, window)
    assert window.state.model.attention == ("attn",)
    window.state.select_grad_site("attention (per head)")
    assert window.banner.isVisible() and window.banner.action_button.text() == "Tick attn"
    assert "this model's attention modules (1: attn" in window.banner.text()
    window.banner.action_button.click()
    outcome = ui.expect_result(qtbot, window)
    assert "attn" in window.state.ticks and window.state.layer == "attn" and "attn:attention" in outcome.result.captures
