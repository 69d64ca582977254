"""Issue 41, item 19 (start-up): fitting the Modules tree's columns to a new model measures a few cells a column
(those whose text is widest), not every cell: QTreeView.resizeColumnToContents asked the delegate for every row,
about ten data() calls a cell (30-40 ms of the demo launch's GUI thread). The widths are Qt's own."""

from __future__ import annotations

import sys

from inspector.gui.views.layer_model import LayerTreeModel


def _rows_shown(tree) -> int:
    from PySide6.QtCore import QModelIndex

    proxy, count, stack = tree.model(), 0, [QModelIndex()]
    while stack:
        parent = stack.pop()
        for row in range(proxy.rowCount(parent)):
            count += 1
            index = proxy.index(row, 0, parent)
            if tree.isExpanded(index):
                stack.append(index)
    return count


def test_the_widths_measured_are_qts_and_few_cells_are_asked(ui, open_window, gui_files, image_file):
    window = open_window(ui.source(gui_files, "TinyViT"), image_file)
    tree, box = window.tree_view, window.filter_box
    for expand, pattern in ((tree.expandAll, ""), (lambda: tree.expandToDepth(0), ""), (tree.expandAll, "attn")):
        box.edit.setText(pattern)
        expand()
        assert box.content_widths() == [tree.sizeHintForColumn(col) for col in range(tree.model().columnCount())]
    box.edit.setText("")
    import torch
    from torch import nn

    from inspector.core.sources.layers import build_layer_tree

    blocks = [nn.Sequential(nn.Conv2d(4, 4, 1), nn.BatchNorm2d(4), nn.ReLU()) for _ in range(12)]
    model = nn.Sequential(*blocks, nn.Flatten(), nn.Linear(4 * 3 * 3, 2))
    window.layer_model.set_tree(build_layer_tree(model, torch.zeros(1, 4, 3, 3)))
    tree.expandAll()
    calls = []
    code = LayerTreeModel.data.__code__

    def count(frame, event, _arg):
        if event == "call" and frame.f_code is code:
            calls.append(1)

    sys.setprofile(count)
    try:
        box.fit_columns()
    finally:
        sys.setprofile(None)
    cells = _rows_shown(tree) * tree.model().columnCount()
    assert cells >= 200
    assert box.content_widths() == [tree.sizeHintForColumn(col) for col in range(tree.model().columnCount())]
    assert len(calls) < cells, f"{len(calls)} data() calls for {cells} cells"
    header = tree.header()
    for col in range(3):
        assert tree.columnWidth(col) >= header.sectionSizeHint(col)
    assert tree.columnWidth(2) >= tree.sizeHintForColumn(2)
