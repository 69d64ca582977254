"""Issue 52 item 7: a panel that has no attention to show (the layer shown is not an attention module) offers a
button that ticks the model's first attention module and shows it; the hint only said to (a Hugging Face ViT's
first module is a long path to find in the tree)."""

from __future__ import annotations

import numpy as np


def test_the_panel_with_no_attention_ticks_and_shows_the_first(ui, qtbot, open_window, gui_files, image_file):
    window = open_window(ui.source(gui_files, "TinyViT"), image_file, {"patch_embed", "head"})
    window.layer_combo.setCurrentIndex(window.layer_combo.findData("head"))
    window.grad_site_combo.setCurrentText("attention (per head)")
    window.state.select_grad_site(window.grad_site_combo.currentText())
    ui.expect_result(qtbot, window)
    panel = window.gradient_panel
    qtbot.waitUntil(lambda: panel.stack.currentWidget() is panel.message, timeout=10_000)
    assert panel.message.toolTip() == ("No attention at head: tick one of this model's 1 attention modules (the "
                                       "first is attn) and show it.")
    assert panel.action.isVisibleTo(panel) and panel.action.text() == "Tick and show the first"
    assert panel.action.toolTip() == "Tick attn and show it"
    assert not window.activation_panel.action.isVisibleTo(window.activation_panel)  # head's output is there
    panel.action.click()
    outcome = ui.expect_result(qtbot, window)
    assert "attn" in window.state.ticks and window.state.layer == "attn"
    qtbot.waitUntil(lambda: panel.key == "attn:attention", timeout=10_000)
    assert not panel.action.isVisibleTo(panel)  # the attention is shown: nothing to offer
    probs = outcome.result.captures["attn:attention"].array  # (1, 2 heads, 17, 17): the class token's row drawn
    np.testing.assert_array_equal(panel.maps[1], probs[0, 1, 0, 1:].reshape(4, 4))
