"""Issue 52, item 8: a model loaded fits the Modules tree's columns once: the window fits them after expanding the
tree's first level, and the fit that expanding asked for (a turn later) is dropped as done; it measured every
column again and repainted the tree in the turns after a load (vit_b_16: the longest stall once loaded 83 ms in the
issue). The widths are those a fit measures now."""

from __future__ import annotations


def test_a_load_fits_the_tree_once(qtbot, window):
    box = window.filter_box
    calls = []
    fit_columns = box.fit_columns

    def counted() -> None:
        calls.append(1)
        fit_columns()

    box.fit_columns = counted
    try:
        window.tree_view.collapseAll()
        window._on_loaded(window.state.model, set(window.state.ticks))  # the tree set again, expanded, fitted
        qtbot.wait(200)  # the turns after it
        assert len(calls) == 1
    finally:
        del box.fit_columns
    header = window.tree_view.header()
    widths = [header.sectionSize(i) for i in range(header.count())]
    box.fit_columns()
    assert [header.sectionSize(i) for i in range(header.count())] == widths
