"""Issue 41, item 15: at the first window's size (1280x800 here: tests/conftest.py) nothing is cut without a way to
read it: the Modules tree's Output shape column and every header whole, the panels' headers whole."""

from __future__ import annotations

from PySide6.QtCore import Qt


def test_the_module_tree_shows_every_output_shape_and_header_whole(ui, open_window, gui_files, image_file):
    """TinyViT's types are long (MultiheadAttention, NonDynamicallyQuantizableLinear): the type column was kept
    at 120 px and the name at up to 170, so the shapes began past the dock's edge."""
    window = open_window(ui.source(gui_files, "TinyViT"), image_file)
    tree, header = window.tree_view, window.tree_view.header()
    tree.expandAll()
    widths = [tree.columnWidth(col) for col in range(3)]
    for col, width in enumerate(widths):
        assert width >= header.sectionSizeHint(col), f"the {window.layer_model.headerData(col, Qt.Horizontal)} " \
                                                      f"header is cut"
    assert widths[2] >= tree.sizeHintForColumn(2), "an output shape is cut"
    assert sum(widths) <= tree.viewport().width(), f"the Output shape column ends off the dock: {widths}"
    out_proj = window.layer_model.match(window.layer_model.index(0, 0), Qt.UserRole, "attn.out_proj", 1,
                                        Qt.MatchRecursive | Qt.MatchExactly)[0]
    tip = window.layer_model.data(out_proj, Qt.ToolTipRole)  # its type is cut short: the tooltip has it whole
    assert tip.startswith("attn.out_proj (NonDynamicallyQuantizableLinear)")


def test_a_long_error_and_its_details_leave_the_mosaics_their_room(qtbot, window):
    """A long error wrapped over 10 lines and its traceback over 9 more squeezed the mosaics to about 80 px at
    1280x800 and laid the enlarged channel's "on input" row over its map. The message shows 3 lines and the
    details 6, each scrolling for the rest; the panel's rows keep out of each other."""
    from inspector.gui.common.notice import Notice

    text = "The model raised RuntimeError: " + " ".join(f"reason {i} why this input is refused;" for i in range(60))
    details = "Traceback (most recent call last):\n" + "\n".join(f'  File "model.py", line {i}, in forward'
                                                                 for i in range(80))
    banner = window.banner
    banner.show_notice(Notice("error", text, details))
    banner.details_button.setChecked(True)
    qtbot.wait(100)
    panel = window.activation_panel
    assert panel.stack.height() > 80
    zoom = panel.zoom
    assert zoom.on_input.geometry().top() > zoom.canvas.geometry().bottom(), "the overlay row is on the map"
    line = banner.label.fontMetrics().lineSpacing()
    assert banner.message_area.height() == 3 * line
    frame, margin = banner.details.frameWidth(), banner.details.document().documentMargin()
    assert banner.details.height() == 6 * line + 2 * frame + 2 * margin
    assert banner.message_area.verticalScrollBar().maximum() > 0 and banner.details.verticalScrollBar().maximum() > 0
    assert banner.label.text() == "Error: " + text and banner.text().endswith("line 79, in forward")  # all of it


def _whole(label) -> bool:
    """`label` shows all of its text: on its lines where it wraps (its longest unbreakable part on its width), on
    its width where it does not."""
    if label.wordWrap():
        return (label.minimumSizeHint().width() <= label.width()
                and label.heightForWidth(label.width()) <= label.height())
    return label.sizeHint().width() <= label.width()


def test_the_panels_headers_are_whole(ui, qtbot, open_window, gui_files, image_file):
    """A token capture's header says which patch grid it is drawn on, the attention's which query: at 1280x800 the
    panels are about 310 px wide and the header was one line cut at its end ("tokens on the 14x14 patch g")."""
    window = open_window(ui.source(gui_files, "TinyViT"), image_file, {"attn", "head"})
    window.layer_combo.setCurrentIndex(window.layer_combo.findData("attn"))
    qtbot.wait(100)
    panel = window.activation_panel
    assert panel.title.text() == "<b>attn:output</b> · tokens on the 4x4 patch grid after 1 prefix token"
    assert _whole(panel.title), "the activation panel's header is cut"
    window.grad_site_combo.setCurrentText("attention (per head)")
    window.state.select_grad_site(window.grad_site_combo.currentText())
    ui.expect_result(qtbot, window)
    qtbot.wait(100)
    title = window.gradient_panel.title
    assert title.text() == ("<b>attn:attention</b> · per head: what the class token attends to (click the input for "
                            "a patch)")
    assert _whole(title), "the gradient panel's header is cut"


def test_a_long_module_path_neither_widens_the_panels_nor_is_cut(qtbot, window):
    """A transformers ViT's `vit.embeddings.patch_embeddings.projection:output` was cut at "proj" in the header and,
    unbreakable in the enlarged channel's label, made the panels wider than the centre: the docks gave way."""
    import numpy as np

    docks = window.modules_dock.width(), window.side_dock.width()
    key = "vit.embeddings.patch_embeddings.projection:output"
    maps = np.linspace(-1, 1, 4 * 6 * 6, dtype=np.float32).reshape(1, 4, 6, 6)
    for panel in (window.activation_panel, window.gradient_panel):
        panel.show_capture(key, maps, None)
    qtbot.wait(100)
    assert (window.modules_dock.width(), window.side_dock.width()) == docks
    for panel in (window.activation_panel, window.gradient_panel):
        assert _whole(panel.title) and panel.title.toolTip() == key
        assert _whole(panel.zoom.label)
        # channel 0: the first 36 of 144 steps from -1 to 1, up to -1 + 35 * 2 / 143 = -0.51049
        assert panel.zoom.label.toolTip() == f"{key} · channel 0 · min -1 · max -0.5105"


def _shows_whole(combo) -> bool:
    """An editable chooser shows its whole text (a line edit too narrow shows the text's end, cut at its start)."""
    edit = combo.lineEdit()
    return edit.fontMetrics().horizontalAdvance(edit.text()) <= edit.contentsRect().width() - 4  # 2 px each side


def test_the_attribution_tabs_choosers_show_a_layers_path_and_a_class_whole(qtbot, window):
    """The Layer chooser shared its row with the method, the class and Compute: 'auto (the map the head reads)'
    showed as 'ap the head reads)' at 1280x800. The class now has a row of its own with the comparisons."""
    view = window.views.attribution
    window.tabs.setCurrentWidget(view)
    long_path = "vit.embeddings.patch_embeddings.projection"
    view.layer.addItem(long_path, long_path)
    view.target.addItem("box:12 traffic light 0.97", "box")
    qtbot.wait(100)
    view.layer.setItemText(0, "auto (the map the head reads)")  # what auto says on a transformer
    view.layer.setCurrentIndex(0)
    assert _shows_whole(view.layer), view.layer.currentText()
    view.layer.setCurrentIndex(view.layer.findData(long_path))
    assert view.layer.currentText() == long_path and _shows_whole(view.layer)
    for i in range(view.target.count()):
        view.target.setCurrentIndex(i)
        assert _shows_whole(view.target), view.target.currentText()


def test_the_detectors_attribution_tab_leaves_the_docks_their_width(qtbot, open_window):
    """A detector's Attribution tab shows its box chooser and Each box: opening it narrowed the docks from 287 to
    272 px (its row asked for more width than the centre had). The docks keep their widths, and so does the
    centre, when the tab opens and when a map is computed on it."""
    window = open_window("demo-detector", "sample:star")
    qtbot.wait(100)
    docks = window.modules_dock.width(), window.side_dock.width()
    centre = window.tabs.width()
    view = window.views.attribution
    window.tabs.setCurrentWidget(view)
    qtbot.wait(100)
    assert view.each_box.isVisible(), "a detector's tab offers Each box"
    assert (window.modules_dock.width(), window.side_dock.width(), window.tabs.width()) == (*docks, centre)
    assert view.minimumSizeHint().width() <= window.tabs.width()


def test_a_panels_message_wraps_a_long_module_path(qtbot, make_panel):
    """Issue 52 item 7: the attention hint on a Hugging Face ViT names its first attention module,
    vit.encoder.layer.0.attention.attention: one word wider than a panel at 1280x800, cut at its edge. A long path
    breaks after its dots; the tooltip has the words as they are."""
    panel = make_panel()
    panel.resize(310, 600)
    text = ("No attention at vit.embeddings: tick one of this model's 12 attention modules (the first is "
            "vit.encoder.layer.0.attention.attention) and show it.")
    panel.clear(text)
    qtbot.wait(50)
    assert _whole(panel.message), "the message is cut"
    assert panel.message.toolTip() == text and panel.message.text().replace("\u200b", "") == text
