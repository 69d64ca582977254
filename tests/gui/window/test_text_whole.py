"""Issue 52, item 7: what a new user reads first is whole. The right column's tabs read "E…", "At…", "Conce…" on
first launch at 1280x800 and 1920x1080 (four titles wider than the column); the Modules tree's Module column was
squeezed to "co…" when the tree was fitted in a narrowed dock (a wider right column beside it)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTabBar, QToolBar


@pytest.mark.parametrize("size", [None, (1920, 1080)])
def test_every_tab_reads_whole(qtbot, window, size):
    if size is not None:
        window.resize(*size)
    qtbot.wait(100)
    bars = [b for b in window.findChildren(QTabBar, options=Qt.FindDirectChildrenOnly) if b.isVisible()]
    assert len(bars) == 1, "the right column's docks are not tabbed"
    for bar in bars + [window.tabs.tabBar()]:
        for i in range(bar.count()):  # a tab narrower than its text's size hint shows it cut, with an ellipsis
            assert bar.tabRect(i).width() >= bar.tabSizeHint(i).width(), f"the tab {bar.tabText(i)!r} is cut"
    assert [bars[0].tabText(i) for i in range(bars[0].count())] == ["Predictions", "Edits", "Atlas", "Concepts"]


def _whole(tree) -> list[str]:
    """The columns of `tree` narrower than what they show: every name and shape whole, each header whole."""
    header, cut = tree.header(), []
    for col, name in enumerate(("Module", "Type", "Output shape")):
        if tree.columnWidth(col) < header.sectionSizeHint(col):
            cut.append(f"{name} header")
    for col, name in ((0, "a module name"), (2, "an output shape")):
        if tree.columnWidth(col) < tree.sizeHintForColumn(col):
            cut.append(name)
    return cut


def test_the_module_names_stay_whole_in_a_narrow_dock(ui, qtbot, open_window, gui_files, image_file):
    """Tiny's tree in a dock narrowed to 170 px: the names, the shapes and the headers whole (the tree scrolls
    sideways), the type column at its header's width; as the dock widens again the type has its room back. A
    model loaded into the narrow dock is fitted by the same rule."""
    window = open_window(ui.source(gui_files, "Tiny"), image_file)
    tree = window.tree_view
    tree.expandAll()
    window.filter_box.fit_columns()
    assert _whole(tree) == []
    window.resizeDocks([window.modules_dock], [170], Qt.Horizontal)
    qtbot.waitUntil(lambda: tree.viewport().width() < 170)
    assert _whole(tree) == []
    assert tree.columnWidth(1) == tree.header().sectionSizeHint(1)  # the type gives way first
    window.filter_box.fit_columns()  # as a model loaded into the narrow dock is
    assert _whole(tree) == []
    window.resizeDocks([window.modules_dock], [400], Qt.Horizontal)
    qtbot.waitUntil(lambda: tree.viewport().width() > 300)
    assert _whole(tree) == [] and tree.columnWidth(1) >= tree.sizeHintForColumn(1)


def test_a_deeper_name_shown_is_whole(qtbot, window):
    """Expanding a module shows its children's names, indented one step more: the Module column widens to them."""
    from collections import OrderedDict

    import torch
    from torch import nn

    from inspector.core.sources.layers import build_layer_tree

    inner = nn.Sequential(OrderedDict(the_longest_module_name=nn.ReLU()))
    model = nn.Sequential(OrderedDict(a=nn.Sequential(OrderedDict(b=inner))))
    window.layer_model.set_tree(build_layer_tree(model, torch.zeros(1, 4)))
    tree, proxy = window.tree_view, window.proxy
    tree.collapseAll()
    window.filter_box.fit_columns()
    narrow = tree.columnWidth(0)
    tree.expand(proxy.index(0, 0))  # a, then b: the long name two steps in
    tree.expand(proxy.index(0, 0, proxy.index(0, 0)))
    qtbot.waitUntil(lambda: tree.columnWidth(0) > narrow)
    assert tree.columnWidth(0) >= tree.sizeHintForColumn(0)


def test_the_weights_chooser_reads_whole_in_a_full_toolbar(qtbot, window):
    """At 1280x800 with a long model and input the toolbar wants more than the window's width: the model and input
    choosers give way (they elide a path), the weights chooser keeps its longest choice whole. Failed before: a
    model folder's "pretrained (folder)" read "pretrained (folder" there."""
    from types import SimpleNamespace

    window.resize(1280, 800)
    combo = window.weights_combo
    combo.show_loaded(SimpleNamespace(seed=None, weights="pretrained (folder)", kind="hf"))
    window.input_combo.setEditText("/home/someone/a/rather/long/folder/of/pictures/taken/in/the/garden/0001.png")
    bar = window.findChild(QToolBar, "toolbar")
    qtbot.waitUntil(lambda: bar.sizeHint().width() > bar.width())
    qtbot.wait(50)
    assert combo.currentText() == "pretrained (folder)"
    assert combo.width() >= combo.sizeHint().width()
    assert window.input_combo.width() < window.input_combo.sizeHint().width()  # the input gave way instead
