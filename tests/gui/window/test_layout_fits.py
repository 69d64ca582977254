"""Issue 25, item 12: at 1280x800 the Edits dock's form fits its width (no horizontal scroll bar hiding
Presets, Add text or All off), the Modules tree shows the output shapes, and the histogram labels only 0."""

from __future__ import annotations

from PySide6.QtWidgets import QScrollArea


def test_the_edits_dock_and_the_modules_tree_fit_at_1280x800(qtbot, window):
    window.resize(1280, 800)
    window.edits_dock.raise_()
    qtbot.wait(200)
    scroll = window.edits_dock.widget()
    assert isinstance(scroll, QScrollArea)
    assert scroll.horizontalScrollBar().maximum() == 0, "the Edits form is wider than its dock"
    panel = window.views.edits_panel
    assert panel.minimumSizeHint().width() <= scroll.viewport().width()
    tree = window.tree_view
    shape_left = sum(tree.columnWidth(c) for c in range(2))
    assert shape_left < tree.viewport().width() - 40, "the Output shape column starts off-screen"
    index = window.layer_model.index(0, 0)
    tip = window.layer_model.data(index, 3)  # Qt.ToolTipRole
    assert "output 1x" in tip and "called 1x per forward" in tip


def test_the_histogram_marks_zero_only(make_panel):
    import numpy as np

    panel = make_panel()
    panel.show_capture("x:output", np.linspace(-6, 2, 2 * 9 * 9, dtype=np.float32).reshape(1, 2, 9, 9), None)
    axis = panel.hist.getAxis("bottom")
    assert axis.tickValues(-6.2, 2.1, 60) == [(1.0, [0.0])] and axis.tickValues(0.5, 2.0, 60) == []


def test_the_layer_combo_is_searchable_and_the_tree_ticks_only_by_its_box(ui, qtbot, window):
    """Issue 25, viewing: the Layer combo completes on any part of a name. Issue 41, item 9: a module made current
    in the tree (a click on its name, the arrow keys) is selected, not ticked, and the status bar says how to
    capture it; a right-button press changes nothing (it ticked the row and re-ran before the menu opened); the box
    ticks it, and it is shown."""
    from PySide6.QtCore import QPoint, Qt

    assert window.layer_combo.isEditable()
    assert window.layer_combo.completer().filterMode() == Qt.MatchContains
    path = "features.2"  # the ReLU: not ticked by default
    assert path not in window.state.ticks
    source = window.layer_model.match(window.layer_model.index(0, 0), Qt.UserRole, path, 1,
                                      Qt.MatchRecursive | Qt.MatchExactly)[0]
    view_index = window.proxy.mapFromSource(source)
    runs = window.worker.runs_done
    current = window.tree_view.currentIndex()
    rect = window.tree_view.visualRect(view_index)
    qtbot.mouseClick(window.tree_view.viewport(), Qt.RightButton, pos=QPoint(rect.center()))
    assert window.tree_view.currentIndex() == current and path not in window.state.ticks
    window.tree_view.setCurrentIndex(view_index)  # as a click on the name does
    assert path not in window.state.ticks and window.state.layer != path
    assert window.statusBar().currentMessage() == (f"{path} is not ticked: tick its box (or press Space) to capture "
                                                   f"it and show it here.")
    qtbot.wait(400)  # longer than the auto-run debounce: nothing ran
    assert window.worker.runs_done == runs
    window.layer_model.setData(source, Qt.Checked, Qt.CheckStateRole)  # the box
    outcome = ui.expect_result(qtbot, window)
    assert path in window.state.ticks
    assert f"{path}:output" in outcome.result.captures


def test_docks_keep_their_width_whatever_the_names_shown(qtbot, window):
    """Issue 25, item 12: a long second-model name in Compare's Against, long layer names and long class
    names used to widen the centre (its minimum follows the widest chooser) and squeeze both docks."""
    window.resize(1280, 800)
    qtbot.wait(200)
    before = window.modules_dock.width(), window.side_dock.width()
    long = "vit.encoder.layer.11.attention.attention.query.output.dense.some.long.name"
    window.views.compare.set_against("hf:/home/someone/models/vit-base-patch16-224-finetuned-long (random, seed 12345)")
    for combo in (window.layer_combo, window.views.compare.layer, window.views.attribution.layer,
                  window.views.attribution.target):
        combo.addItem(long, long)
        combo.setCurrentIndex(combo.count() - 1)
    for i in range(window.tabs.count()):
        window.tabs.setCurrentIndex(i)
        qtbot.wait(50)
        assert (window.modules_dock.width(), window.side_dock.width()) == before, window.tabs.tabText(i)
    assert window.tabs.minimumSizeHint().width() <= 660
