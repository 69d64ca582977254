"""The Graph tab in the window, on the demo model: the graph the worker records is the one `record_graph` records;
a node is the tree's module (click, tick, menu, edits); search; groups open and close; a model whose forward
cannot be recorded says why."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication, QMenu

from inspector.core.inputs.samples import list_samples

UNWATCHED = '''
import torch
from torch import nn


class Unwatched(nn.Module):
    """Runs as any model does, and refuses to run while a TorchFunctionMode watches (as the recorder does)."""

    input_shape = (1, 3, 16, 16)

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, 4, 3)
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        if torch._C._is_torch_function_mode_enabled():
            raise RuntimeError("this forward refuses to be watched")
        return self.fc(self.conv(x).mean(dim=(2, 3)))
'''


@pytest.fixture
def demo(ui, open_window):
    if not ui.has_demo():
        pytest.skip("the demo model's weights are not in resources/")
    return open_window("demo", f"sample:{list_samples()[0]}")


def recorded(source: str, input_source: str):
    """The graph `record_graph` records for the model and input, called here (not through the app)."""
    from inspector.core.graph import record_graph
    from inspector.core.inputs.files import load_input
    from inspector.core.sources.loader import load_model

    loaded = load_model(source)
    return record_graph(loaded, load_input(input_source, loaded.preprocess, loaded.input_shape))


def show_graph(qtbot, window):
    window.tabs.setCurrentWidget(window.views.graph)
    graph = window.graph
    qtbot.waitUntil(lambda: graph.layout is not None or "No graph" in window.views.graph.status.text(),
                    timeout=60_000)
    qtbot.waitUntil(lambda: not window.views.graph.scene.drawing())
    return graph


def wait_layout(qtbot, window, wanted) -> None:
    qtbot.waitUntil(lambda: window.graph.layout is not None and wanted(window.graph.layout), timeout=20_000)
    qtbot.waitUntil(lambda: not window.views.graph.scene.drawing())


def click_node(qtbot, window, node_id: str, part: str = "body") -> None:
    view, item = window.views.graph.view, window.views.graph.scene.nodes[node_id]
    view.centerOn(item)
    local = {"body": item.rect.center() + QPointF(item.rect.width() / 4, 0),
             "tick": item.tick_rect().center(), "toggle": item.toggle_rect().center()}[part]
    pos = view.mapFromScene(item.mapToScene(local))
    assert view.item_at(pos) == (item, part)
    qtbot.mouseClick(view.viewport(), Qt.LeftButton, pos=pos)


def test_the_tab_shows_the_graph_record_graph_records(qtbot, demo):
    graph = show_graph(qtbot, demo)
    want = recorded("demo", demo.state.input)
    assert [n.id for n in graph.graph.nodes] == [n.id for n in want.nodes]
    assert set(demo.views.graph.scene.nodes) == {n.id for n in want.closed().nodes}  # top-level groups closed
    assert "block" in demo.views.graph.scene.nodes and demo.views.graph.scene.nodes["block"].is_group
    assert demo.views.graph.caption.text() == f"<b>{want.caption}</b>"
    drawn = demo.views.graph.view
    assert drawn.zoom() >= 0.8  # readable at 1280x800 from the first view
    runs = demo.worker.runs_done
    demo.state.run()  # another run on the same model and input records nothing again
    qtbot.waitUntil(lambda: demo.worker.runs_done > runs, timeout=60_000)
    assert demo.graph.graph is graph.graph


def test_a_click_on_a_node_selects_its_layer_everywhere(qtbot, ui, demo):
    show_graph(qtbot, demo)
    ticked = demo.layer_model.ticked()
    other = next(p for p in ticked if p != demo.state.layer and p in demo.views.graph.scene.nodes)
    click_node(qtbot, demo, other)
    assert demo.state.layer == other
    assert demo.layer_model.path_of(demo.proxy.mapToSource(demo.tree_view.currentIndex())) == other
    assert demo.layer_combo.currentData() == other
    assert demo.views.graph.scene.nodes[other].selected

    first = ticked[0] if ticked[0] != other else ticked[1]  # chosen elsewhere: its node is outlined
    demo.state.select_layer(first)
    shown = demo.graph.shown_selected()
    assert demo.views.graph.scene.nodes[shown].selected and not demo.views.graph.scene.nodes[other].selected


def test_a_nodes_tick_box_is_the_trees_tick(qtbot, ui, demo):
    show_graph(qtbot, demo)
    path = next(p for p in ("conv2", "bn2", "relu2") if p not in demo.layer_model.ticked())
    click_node(qtbot, demo, path, "tick")
    assert path in demo.layer_model.ticked()
    assert demo.graph.check_state(path) == Qt.Checked
    outcome = ui.expect_result(qtbot, demo)
    assert any(c.key.layer == path for c in outcome.result.captures.values())  # the next run captures it

    index = demo.layer_model.index_of(path)  # ticked off in the tree: the node's box shows it
    demo.layer_model.setData(index, Qt.Unchecked, Qt.CheckStateRole)
    assert demo.graph.check_state(path) == Qt.Unchecked
    click_node(qtbot, demo, "block", "tick")  # a group's box is its module's: the whole subtree
    assert {"block.conv1", "block.conv2"} <= set(demo.layer_model.ticked())
    assert demo.graph.check_state("block") == Qt.Checked


def test_the_context_menu_of_a_node_is_the_trees(qtbot, demo, monkeypatch):
    from inspector.gui.window.tree_menu import tree_menu

    show_graph(qtbot, demo)
    shown: list[QMenu] = []
    monkeypatch.setattr(QMenu, "popup", lambda menu, *_a: shown.append(menu))
    view, item = demo.views.graph.view, demo.views.graph.scene.nodes["conv2"]
    view.centerOn(item)
    pos = view.mapFromScene(item.mapToScene(item.rect.center()))
    QApplication.sendEvent(view.viewport(), QContextMenuEvent(QContextMenuEvent.Mouse, pos,
                                                              view.viewport().mapToGlobal(pos)))
    assert len(shown) == 1
    texts = [a.text() for a in shown[0].actions()]
    tree = [a.text() for a in tree_menu(demo, "conv2").actions()]
    assert texts[:len(tree)] == tree and texts[len(tree) + 1:] == ["Close every group", "Fit the graph in view"]
    assert "Tick all Conv2d" in texts and "Add edit on conv2" in texts
    shown[0].actions()[texts.index("Tick all Conv2d")].trigger()  # the tree's action, on the tree's model
    assert {"conv1", "conv2", "conv3", "block.conv1", "block.conv2"} <= set(demo.layer_model.ticked())


def test_an_edit_marks_its_node_and_is_listed_on_hover(qtbot, demo):
    show_graph(qtbot, demo)
    assert demo.state.editing.add_text("conv2:grad_output=clamp(min=0)")
    node, group = demo.views.graph.scene.nodes["conv2"], demo.views.graph.scene.nodes["block"]
    assert node.edited and "conv2:grad_output=clamp(min=0)" in node.toolTip()
    assert not group.edited and "Edits" not in demo.views.graph.scene.nodes["conv1"].toolTip()
    assert demo.state.editing.add_text("block.conv1:output=scale(k=2.0)")  # inside a closed group: the group
    assert group.edited and "block.conv1:output=scale(k=2.0)" in group.toolTip()


def test_search_by_type_centres_each_match_and_counts_them(qtbot, demo):
    graph = show_graph(qtbot, demo)
    want = recorded("demo", demo.state.input)
    convs = [n.id for n in want.nodes if n.kind == "module" and n.op == "Conv2d"]
    tab, view = demo.views.graph, demo.views.graph.view
    tab.search.setText("type:Conv2d")
    for k, node_id in enumerate(convs):
        tab.search.returnPressed.emit()
        wait_layout(qtbot, demo, lambda layout, n=node_id: n in layout.boxes)
        assert tab.found.text() == f"{k + 1} of {len(convs)}"
        centre = view.mapToScene(view.viewport().rect().center())
        assert tab.scene.rect_of(node_id).adjusted(-2, -2, 2, 2).contains(centre), node_id
        assert graph.shown_selected() == node_id
    assert "block" in graph.open  # a match inside the closed group opened it
    tab.search.setText("no such thing")
    tab.search.returnPressed.emit()
    assert tab.found.text() == "no match"



def test_the_search_text_stays_with_its_model(qtbot, ui, demo, gui_files):
    """Issue 52 item 7: the text searched on one model's graph stayed in the box on the next model's graph (names
    that are not there). Another input of the same model keeps it; another model clears it."""
    from inspector.core.records.requests import ModelRequest

    graph = show_graph(qtbot, demo)
    tab = demo.views.graph
    tab.search.setText("conv")
    tab.search.returnPressed.emit()
    first = graph.graph
    demo.state.set_input(f"sample:{list_samples()[1]}")
    qtbot.waitUntil(lambda: graph.graph is not None and graph.graph is not first, timeout=60_000)
    assert tab.search.text() == "conv"
    first = graph.graph
    demo.state.request_model(ModelRequest(ui.source(gui_files, "Tiny"), trust=True))
    ui.expect_result(qtbot, demo)
    qtbot.waitUntil(lambda: graph.graph is not None and graph.graph is not first, timeout=60_000)
    assert tab.search.text() == ""

def test_opening_a_group_adds_its_nodes_and_closing_restores(qtbot, demo):
    graph = show_graph(qtbot, demo)
    closed = set(demo.views.graph.scene.nodes)
    view = demo.views.graph.view
    view.centerOn(demo.views.graph.scene.nodes["block"])
    corner = view.mapFromScene(demo.views.graph.scene.rect_of("block").topLeft())
    click_node(qtbot, demo, "block", "toggle")
    wait_layout(qtbot, demo, lambda layout: "block" in layout.open_groups)
    moved = view.mapFromScene(demo.views.graph.scene.rect_of("block").topLeft()) - corner
    assert abs(moved.x()) <= 2 and abs(moved.y()) <= 2  # the group opened where it was on screen
    children = {n.id for n in graph.graph.nodes if n.group == "block"}
    assert set(demo.views.graph.scene.nodes) == closed - {"block"} | children
    assert "block" in demo.views.graph.scene.frames
    frame = demo.views.graph.scene.frames["block"]
    view.centerOn(frame)
    title = view.mapFromScene(frame.mapToScene(frame.title_rect().center()))
    qtbot.mouseDClick(view.viewport(), Qt.LeftButton, pos=title)  # a double click on its title closes it
    wait_layout(qtbot, demo, lambda layout: not layout.open_groups)
    assert set(demo.views.graph.scene.nodes) == closed and not demo.views.graph.scene.frames


def test_a_group_opened_off_screen_is_scrolled_into_view(qtbot, demo):
    """Opened by code (or the menu) while the view shows the input: the view scrolls to the group's frame."""
    show_graph(qtbot, demo)
    view, scene = demo.views.graph.view, demo.views.graph.scene
    view.centerOn(scene.nodes["input"])

    def seen():
        return view.mapToScene(view.viewport().rect()).boundingRect()

    assert not seen().intersects(scene.rect_of("block"))  # below the view
    demo.graph.toggle("block")
    wait_layout(qtbot, demo, lambda layout: "block" in layout.open_groups)
    frame = scene.rect_of("block")
    assert seen().contains(frame.topLeft()) and seen().contains(frame.topRight() - QPointF(1, 0))


def test_a_model_whose_forward_cannot_be_recorded_says_why(qtbot, open_window, tmp_path, image_file):
    (tmp_path / "unwatched.py").write_text(UNWATCHED)
    window = open_window(f"{tmp_path / 'unwatched.py'}:Unwatched", image_file)
    show_graph(qtbot, window)
    text = window.views.graph.status.text()
    assert text.startswith("No graph:") and "refuses to be watched" in text and "\n" not in text
    assert not window.views.graph.scene.nodes
    assert window.layer_model.paths() == ["conv", "fc"]  # the tree still works


def test_wheel_and_double_click_in_the_window(qtbot, demo):
    show_graph(qtbot, demo)
    view = demo.views.graph.view
    before = view.zoom()
    from PySide6.QtGui import QWheelEvent

    at = view.viewport().rect().center()
    view.wheelEvent(QWheelEvent(QPointF(at), QPointF(view.viewport().mapToGlobal(at)), QPoint(0, 0), QPoint(0, 360),
                                Qt.NoButton, Qt.NoModifier, Qt.NoScrollPhase, False))
    assert view.zoom() > before
    empty = next(QPoint(x, 4) for x in range(4, view.viewport().width(), 20) if view.item_at(QPoint(x, 4))[0] is None)
    qtbot.mouseDClick(view.viewport(), Qt.LeftButton, pos=empty)
    assert view.mapToScene(view.viewport().rect()).boundingRect().contains(view.content())


def test_a_video_is_recorded_once_on_the_frame_on_screen(qtbot, window, tmp_path):
    import numpy as np

    from inspector.core.inputs.video import write_video

    clip = str(write_video(tmp_path / "clip.mp4", [np.full((32, 32, 3), 5 + 6 * i, np.uint8) for i in range(12)],
                           fps=25))
    shown = []
    window.sigResultShown.connect(shown.append)
    window.state.live.open(clip, pace="demand")
    qtbot.waitUntil(lambda: len(shown) >= 2, timeout=60_000)
    graph = show_graph(qtbot, window)
    assert graph.layout is not None and "No graph" not in window.views.graph.status.text()
    recorded_graph = graph.graph
    qtbot.waitUntil(lambda: window.state.live.feed.ended and not window.state.live.busy, timeout=60_000)
    assert graph.graph is recorded_graph  # later frames record nothing again
    assert {"features", "fc"} <= set(window.views.graph.scene.nodes)
