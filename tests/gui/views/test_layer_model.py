"""LayerTreeModel over resnet18's layer tree: checkboxes, tri-state parents, bulk ticks, filtering."""

from __future__ import annotations

import random

import pytest
import torch
import torchvision
from PySide6.QtCore import QModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtTest import QAbstractItemModelTester
from PySide6.QtWidgets import QTreeView

from inspector.core.sources.layers import build_layer_tree
from inspector.gui.views.layer_model import COLUMNS, LayerTreeModel


@pytest.fixture(scope="module")
def tree():
    return build_layer_tree(torchvision.models.resnet18())  # random weights


@pytest.fixture
def model(qapp, tree):
    m = LayerTreeModel()
    m.set_tree(tree, set())
    return m


def paths(tree) -> list[str]:
    return [l.path for l in tree.layers if l.path]


def subtree(tree, path: str) -> set[str]:
    return {p for p in paths(tree) if p == path or p.startswith(path + ".")}


def state(model, path: str):
    return model.data(model.index_of(path), Qt.CheckStateRole)


def set_state(model, path: str, value) -> None:
    assert model.setData(model.index_of(path), value, Qt.CheckStateRole)


def assert_states_follow(model, tree, ticked: set[str]) -> None:
    """Every node's check state is what the ticked set says, parents tri-state."""
    assert model.ticked() == [p for p in paths(tree) if p in ticked]
    for path in paths(tree):
        below = subtree(tree, path)
        hit = len(below & ticked)
        want = Qt.Checked if hit == len(below) else Qt.PartiallyChecked if hit else Qt.Unchecked
        assert state(model, path) == want, path


def test_checkbox_data_and_flags(model, tree):
    conv1 = model.index_of("conv1")
    assert model.flags(conv1) & Qt.ItemIsUserCheckable
    assert model.flags(conv1) & Qt.ItemIsEnabled
    type_cell = model.index(conv1.row(), 1, QModelIndex())
    assert not model.flags(type_cell) & Qt.ItemIsUserCheckable
    assert model.data(conv1, Qt.CheckStateRole) == Qt.Unchecked
    assert model.data(type_cell, Qt.CheckStateRole) is None
    assert model.data(conv1) == "conv1"
    assert model.data(type_cell) == "Conv2d"
    assert model.data(model.index(conv1.row(), 3, QModelIndex())) == "9,408"
    assert model.data(conv1, Qt.UserRole) == "conv1"
    assert [model.headerData(i, Qt.Horizontal) for i in range(model.columnCount())] == list(COLUMNS)
    assert model.rowCount() == len(tree.children(""))
    assert model.rowCount(model.index_of("layer1")) == 2
    assert model.path_of(model.index_of("layer2.0.downsample.0")) == "layer2.0.downsample.0"
    assert not model.index_of("no.such.layer").isValid()
    assert not model.setData(type_cell, Qt.Checked, Qt.CheckStateRole)
    assert not model.setData(conv1, "x", Qt.EditRole)


def test_leaf_tick_makes_parents_partial_and_emits_for_them(model, tree):
    changed = []
    model.dataChanged.connect(lambda a, b, roles: changed.append(model.path_of(a)))
    ticks = []
    model.sigTicksChanged.connect(ticks.append)
    set_state(model, "layer1.0.conv1", Qt.Checked)
    assert state(model, "layer1.0.conv1") == Qt.Checked
    assert state(model, "layer1.0") == Qt.PartiallyChecked
    assert state(model, "layer1") == Qt.PartiallyChecked
    assert state(model, "layer2") == Qt.Unchecked
    assert {"layer1.0.conv1", "layer1.0", "layer1"} <= set(changed)  # views repaint the parents
    assert ticks == [{"layer1.0.conv1"}]
    set_state(model, "layer1.0.conv1", Qt.Unchecked)
    assert_states_follow(model, tree, set())


def test_parent_tick_follows_the_whole_subtree(model, tree):
    set_state(model, "layer1.0", Qt.Checked)
    assert set(model.ticked()) == subtree(tree, "layer1.0")
    assert state(model, "layer1.0") == Qt.Checked
    assert state(model, "layer1") == Qt.PartiallyChecked
    set_state(model, "layer1", Qt.Checked)
    assert set(model.ticked()) == subtree(tree, "layer1")
    assert state(model, "layer1") == Qt.Checked
    set_state(model, "layer1.0", Qt.Unchecked)
    assert set(model.ticked()) == subtree(tree, "layer1") - subtree(tree, "layer1.0")
    assert state(model, "layer1") == Qt.PartiallyChecked
    set_state(model, "layer1", Qt.Unchecked)  # a partially ticked parent asked to untick
    assert model.ticked() == []
    assert_states_follow(model, tree, set())


def test_view_click_cycle_on_a_partial_parent(model, tree):
    """What a QTreeView sends: Checked for a partial or unticked box, Unchecked for a ticked one."""
    set_state(model, "layer2.0.conv1", Qt.Checked)
    assert state(model, "layer2") == Qt.PartiallyChecked
    set_state(model, "layer2", Qt.Checked)
    assert state(model, "layer2") == Qt.Checked
    set_state(model, "layer2", Qt.Unchecked)
    assert model.ticked() == []


def test_space_in_a_tree_view_toggles_a_partial_parent(qtbot, model, tree):
    """The real view: Space on a partial parent ticks its subtree, again unticks it."""
    view = QTreeView()
    view.setModel(model)
    qtbot.addWidget(view)
    view.show()
    set_state(model, "layer3.0.bn1", Qt.Checked)
    view.setFocus()
    view.setCurrentIndex(model.index_of("layer3"))
    qtbot.keyClick(view, Qt.Key_Space)
    assert set(model.ticked()) == subtree(tree, "layer3")
    qtbot.keyClick(view, Qt.Key_Space)
    assert model.ticked() == []


def test_ticked_is_exactly_what_setdata_ticked(model, tree):
    rng = random.Random(1234)
    all_paths = paths(tree)
    expected: set[str] = set()
    for _ in range(300):
        path = rng.choice(all_paths)
        on = rng.random() < 0.6
        set_state(model, path, Qt.Checked if on else Qt.Unchecked)
        if on:
            expected |= subtree(tree, path)
        else:
            expected -= subtree(tree, path)
        assert set(model.ticked()) == expected
    assert_states_follow(model, tree, expected)


def test_set_ticked_updates_check_states(model, tree):
    changed, ticks = [], []
    model.dataChanged.connect(lambda *a: changed.append(a))
    model.sigTicksChanged.connect(ticks.append)
    wanted = {"conv1", "layer3.1.bn2", "layer4.0.downsample.0", "layer4.0.downsample.1", "fc"}
    model.set_ticked(wanted | {"not.a.layer"})
    assert ticks == [wanted]
    assert changed
    assert_states_follow(model, tree, wanted)
    assert state(model, "layer4.0.downsample") == Qt.PartiallyChecked  # the container itself is not ticked
    model.set_ticked(wanted)  # no change: no signal
    assert len(ticks) == 1
    model.set_ticked(set())
    assert_states_follow(model, tree, set())


def test_tick_type_and_tick_leaves(model, tree):
    convs = {l.path for l in tree.layers if l.type_name == "Conv2d"}
    assert len(convs) == 20
    model.tick_type("Conv2d")
    assert set(model.ticked()) == convs
    model.tick_type("BatchNorm2d")
    model.tick_type("Conv2d", False)
    assert set(model.ticked()) == {l.path for l in tree.layers if l.type_name == "BatchNorm2d"}
    model.tick_leaves()
    assert set(model.ticked()) == set(tree.leaves)
    assert_states_follow(model, tree, set(tree.leaves))
    assert state(model, "layer1.0") == Qt.PartiallyChecked  # leaves ticked, the block itself not


def make_proxy(model) -> QSortFilterProxyModel:
    """The main window's module filter."""
    from inspector.gui.views.layer_filter import LayerFilterProxy

    proxy = LayerFilterProxy()
    proxy.setSourceModel(model)
    return proxy


def visible(proxy, parent=QModelIndex()) -> set[str]:
    seen = set()
    for row in range(proxy.rowCount(parent)):
        index = proxy.index(row, 0, parent)
        seen.add(proxy.sourceModel().path_of(proxy.mapToSource(index)))
        seen |= visible(proxy, index)
    return seen


def with_ancestors(found: set[str]) -> set[str]:
    out = set(found)
    for path in found:
        parts = path.split(".")
        out |= {".".join(parts[:i]) for i in range(1, len(parts))}
    return out


@pytest.mark.parametrize("pattern", ["downsample", "^BatchNorm2d$", "conv", "relu|fc", r"layer4\.1", "^layer2.0.bn"])
def test_filter_by_name_or_type_keeps_ancestors(model, tree, pattern):
    import re

    proxy = make_proxy(model)
    proxy.set_pattern(pattern)
    regex = re.compile(pattern, re.IGNORECASE)
    matched = {l.path for l in tree.layers
               if l.path and (regex.search(l.name) or regex.search(l.path) or regex.search(l.type_name))}
    assert matched
    assert visible(proxy) == with_ancestors(matched)
    proxy.set_pattern("")
    assert visible(proxy) == set(paths(tree))


def test_ticking_through_the_filter(model, tree):
    proxy = make_proxy(model)
    proxy.set_pattern("downsample")
    layer2 = proxy.index(next(r for r in range(proxy.rowCount()) if proxy.index(r, 0).data() == "layer2"), 0)
    block = proxy.index(0, 0, layer2)
    downsample = proxy.index(0, 0, block)
    assert proxy.data(downsample) == "downsample"
    assert proxy.setData(downsample, Qt.Checked, Qt.CheckStateRole)
    assert set(model.ticked()) == subtree(tree, "layer2.0.downsample")
    assert proxy.data(block, Qt.CheckStateRole) == Qt.PartiallyChecked


def test_qabstractitemmodeltester_passes(qtlog, model, tree):
    proxy = make_proxy(model)
    testers = [QAbstractItemModelTester(m, QAbstractItemModelTester.FailureReportingMode.Warning)
               for m in (model, proxy)]
    set_state(model, "layer1.0.conv1", Qt.Checked)
    set_state(model, "layer2", Qt.Checked)
    proxy.set_pattern("bn|fc")
    model.set_ticked({"fc", "layer4.1.bn2"})  # a bulk change (the tester re-walks the tree per signal)
    proxy.set_pattern("")
    model.set_tree(tree, {"fc"})  # a reset
    small = build_layer_tree(torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Sequential(torch.nn.ReLU())))
    model.set_tree(small, {"1.0"})
    assert state(model, "1") == Qt.PartiallyChecked and state(model, "1.0") == Qt.Checked
    problems = [r.message for r in qtlog.records
                if "FAIL" in r.message or (r.context and str(r.context.category).startswith("qt.modeltest"))]
    assert problems == []
    del testers


@pytest.mark.parametrize("name", ["vit_l_16", "efficientnet_b7"])
def test_big_trees_build_filter_and_tick(qtbot, name):
    """Works on trees with hundreds to over a thousand modules (built on the meta device: no weights)."""
    with torch.device("meta"):
        module = torchvision.models.get_model(name)
    tree = build_layer_tree(module)
    assert len(tree) > 250
    model = LayerTreeModel()
    model.set_tree(tree, set())
    proxy = make_proxy(model)
    view = QTreeView()
    view.setUniformRowHeights(True)
    view.setModel(proxy)
    qtbot.addWidget(view)
    view.show()
    proxy.set_pattern("linear|conv")
    view.expandAll()
    shown = visible(proxy)
    assert shown and shown < set(paths(tree))
    model.tick_leaves()
    assert set(model.ticked()) == set(tree.leaves)
    proxy.set_pattern("")
    assert visible(proxy) == set(paths(tree))
    model.set_ticked(set())
    assert model.ticked() == []


def test_filter_accepts_the_cli_type_form(model, tree):
    """`type:Conv2d` (and globs like `type:*Norm*`) as in `--layers`: types only, ancestors kept."""
    proxy = make_proxy(model)
    assert proxy.set_pattern("type:Conv2d") == ""
    convs = {l.path for l in tree.layers if l.type_name == "Conv2d"}
    assert len(convs) == 20  # resnet18: conv1 + 16 in blocks + 3 downsample convs
    assert visible(proxy) == with_ancestors(convs)
    proxy.set_pattern("type:*Norm*")
    assert visible(proxy) == with_ancestors({l.path for l in tree.layers if l.type_name == "BatchNorm2d"})


def test_an_invalid_pattern_says_so_under_the_box(qtbot, model, tree):
    from PySide6.QtWidgets import QTreeView

    from inspector.gui.views.layer_filter import LayerFilterBox

    box = LayerFilterBox(model, QTreeView())
    qtbot.addWidget(box)
    box.show()
    box.edit.setText("layer1.(")  # an unclosed group
    assert box.message.isVisible()
    assert box.message.text().startswith("Not a valid pattern: missing closing parenthesis at character 9")
    assert visible(box.proxy) == set(paths(tree))  # everything stays listed, nothing silently vanishes
    box.edit.setText("layer1")
    assert not box.message.isVisible()
    assert visible(box.proxy) == with_ancestors({p for p in paths(tree) if "layer1" in p})
    box.close()


def test_divergence_marks_that_stay_as_they_were_repaint_nothing(model, tree):
    """Every result sets the divergence marks (None without a second model): the same marks again must
    not make the tree ask for every row's data (a live video ran 470 data() calls per frame on the demo)."""
    changed = []
    model.dataChanged.connect(lambda *args: changed.append(args))
    model.set_divergence(None)
    model.set_divergence(None)
    assert changed == []
    path = paths(tree)[3]
    model.set_divergence({path: 0.5}, 1e-3, path)
    assert len(changed) == len(paths(tree))  # every row, at every depth
    assert model.divergence_colour(path) is not None
    changed.clear()
    model.set_divergence({path: 0.5}, 1e-3, path)
    assert changed == []
    model.set_divergence(None)
    assert len(changed) == len(paths(tree)) and model.divergence_colour(path) is None
