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
