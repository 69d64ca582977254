"""The Graph tab's values overlay on the demo model: the colours are the values `graph_values` and `compare_edits`
give (called here, mapped by the CLI's rule), painted without laying out again, said under the mouse, gone with
"none", and carried to a group opened."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import pytest
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QColor, QMouseEvent

from inspector.core.graph.draw.parts import EDGE_WIDTH
from inspector.core.graph.draw.values import SHOWN, Scale, colour_at, overlay_of
from inspector.core.inputs.samples import list_samples
from inspector.gui.views.graph.items import EdgeItem

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def demo(ui, open_window):
    if not ui.has_demo():
        pytest.skip("the demo model's weights are not in resources/")
    return open_window("demo", f"sample:{list_samples()[0]}")


def show_graph(qtbot, window):
    window.tabs.setCurrentWidget(window.views.graph)
    qtbot.waitUntil(lambda: window.graph.layout is not None, timeout=60_000)
    qtbot.waitUntil(lambda: not window.views.graph.scene.drawing())
    return window.graph


def colour_by(qtbot, window, kind: str):
    """Choose `kind` and wait for its numbers to be painted."""
    values = window.graph_values
    values.choose(kind)
    qtbot.waitUntil(lambda: values.found is not None and values.key == values.request_key()
                    and values.painter.drawn is not None, timeout=60_000)
    return values


def model_and_input(window):
    """The demo model and the input on screen, loaded here (not through the app)."""
    from inspector.core.inputs.files import load_input
    from inspector.core.sources.loader import load_model

    loaded = load_model("demo")
    return loaded, load_input(window.state.input, loaded.preprocess, loaded.input_shape)


def fills(window) -> dict:
    return {k: item.fill for k, item in window.views.graph.scene.nodes.items()}


def test_the_colours_are_the_values_graph_values_gives(qtbot, demo):
    from inspector.core.graph.values.entry import graph_values

    graph = show_graph(qtbot, demo)
    layout = graph.layout
    colour_by(qtbot, demo, "gradient")
    loaded, x = model_and_input(demo)
    want = graph_values(loaded, x, graph.graph).for_view(layout.graph)
    overlay = overlay_of(want, "gradient")
    assert overlay.fills and fills(demo) == {k: QColor(*overlay.fills[k]) if k in overlay.fills else None
                                             for k in demo.views.graph.scene.nodes}
    # by hand: each node's gradient L2 between the lowest and highest drawn, through the map
    grads = {k: v.grad_l2 for k, v in want.nodes.items() if v.grad_l2 is not None and math.isfinite(v.grad_l2)}
    scale = Scale.of(grads.values())
    assert all(fills(demo)[k] == QColor(*colour_at(scale.at(g))) for k, g in grads.items())
    assert demo.graph_values.bar.strip.bar == overlay.bar and demo.graph_values.bar.strip.isVisible()
    # edges as wide as the figure draws them: the overlay's width per edge, on the edge's own item
    widened = demo.graph_values.painter.widened()
    assert widened and widened == {k: w for k, w in overlay.edge_widths.items() if k in widened}
    assert set(widened) == {item.key for item in demo.views.graph.scene.items() if isinstance(item, EdgeItem)
                            and item.key in overlay.edge_widths and overlay.edge_widths[item.key] != EDGE_WIDTH}
    assert graph.layout is layout  # painted on the layout drawn, not laid out again

    runs = demo.worker.runs_done
    key = demo.graph_values.key
    demo.state.run()  # a run ends: the overlay is worked out again, on the same layout
    qtbot.waitUntil(lambda: demo.worker.runs_done > runs, timeout=60_000)
    qtbot.waitUntil(lambda: demo.graph_values.key not in (None, key) and demo.graph_values.painter.drawn is not None,
                    timeout=60_000)
    assert graph.layout is layout and fills(demo)[next(iter(grads))] is not None


def test_activation_zeros_and_l2_are_the_cli_rule(qtbot, demo):
    from inspector.core.graph.values.entry import graph_values

    graph = show_graph(qtbot, demo)
    loaded, x = model_and_input(demo)
    want = graph_values(loaded, x, graph.graph).for_view(graph.layout.graph)
    for kind in ("activation", "zeros", "l2"):
        colour_by(qtbot, demo, kind)
        overlay = overlay_of(want, kind)
        assert {k: c for k, c in fills(demo).items() if c is not None} == {k: QColor(*c) for k, c in
                                                                           overlay.fills.items()}, kind
        assert demo.graph_values.bar.strip.bar == overlay.bar
        assert SHOWN[kind].title.split(" of ")[0] in demo.graph_values.bar.title.text()


def test_an_edit_colours_its_reach(qtbot, demo):
    from inspector.core.graph.values.entry import compare_edits

    graph = show_graph(qtbot, demo)
    edit = "conv2:output=scale(k=2.0)"
    assert demo.state.editing.add_text(edit)
    colour_by(qtbot, demo, "change")
    loaded, x = model_and_input(demo)
    want = compare_edits(loaded, x, graph.graph, [edit]).for_view(graph.layout.graph)
    order = [n.id for n in graph.layout.graph.nodes]
    at = order.index("conv2")
    before, after = [k for k in order[:at] if k in want.change], [k for k in order[at:] if k in want.change]
    assert before and all(want.change[k] == 0 for k in before)
    assert after and all(want.change[k] > 0 for k in after if k != "output") and want.change["conv2"] > 0
    scale = Scale.of(v for v in want.change.values() if math.isfinite(v))
    shown = fills(demo)
    assert all(shown[k] == QColor(*colour_at(scale.at(v))) for k, v in want.change.items() if k in shown)
    assert shown[before[0]] == QColor(*colour_at(0.0)) and shown["conv2"] != shown[before[0]]
    assert demo.graph_values.painter.outlined() == {"conv2": QColor(200, 0, 160)}  # the first divergent


def hover(window, node_id: str) -> str:
    """A mouse move over `node_id` on the canvas; what the tab's status line says then."""
    from PySide6.QtWidgets import QApplication

    view, item = window.views.graph.view, window.views.graph.scene.nodes[node_id]
    view.centerOn(item)
    pos = view.mapFromScene(item.mapToScene(item.rect.center() + QPointF(item.rect.width() / 4, 0)))
    QApplication.sendEvent(view.viewport(), QMouseEvent(QEvent.MouseMove, QPointF(pos),
                                                        QPointF(view.viewport().mapToGlobal(pos)), Qt.NoButton,
                                                        Qt.NoButton, Qt.NoModifier))
    return window.views.graph.status.text()


def test_hovering_a_node_says_its_value_and_none_restores_the_plain_look(qtbot, demo):
    graph = show_graph(qtbot, demo)
    values = colour_by(qtbot, demo, "activation")
    text = hover(demo, "conv2")
    mean = values.found.for_view(graph.layout.graph).nodes["conv2"].mean_abs
    assert text == f"conv2: mean |x| of its output = {mean:.3g}"
    values.choose("none")
    assert all(c is None for c in fills(demo).values()) and not values.painter.widened()
    assert not values.painter.outlined()
    assert not values.bar.strip.isVisible()
    assert "conv2" not in demo.views.graph.status.text()


def test_the_overlay_follows_a_group_opened(qtbot, demo):
    graph = show_graph(qtbot, demo)
    values = colour_by(qtbot, demo, "activation")
    found = values.found
    graph.toggle("block")
    qtbot.waitUntil(lambda: graph.layout is not None and "block" in graph.layout.open_groups, timeout=20_000)
    qtbot.waitUntil(lambda: not demo.views.graph.scene.drawing())
    children = [n.id for n in graph.graph.nodes if n.group == "block"]
    want = overlay_of(found.for_view(graph.layout.graph), "activation")
    assert values.found is found  # nothing worked out again
    shown = fills(demo)
    assert children and all(shown[k] == QColor(*want.fills[k]) for k in children if k in want.fills)
    assert any(k in want.fills for k in children)


NAN_MODEL = '''
import torch
from torch import nn


class MakesNaN(nn.Module):
    """A square root of values that are partly negative: NaN from that node on."""

    input_shape = (1, 3, 16, 16)

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, 4, 3)
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        h = torch.sqrt(self.conv(x) - 0.1)
        return self.fc(h.mean(dim=(2, 3)))
'''


def test_the_first_nan_is_red_and_its_path_outlined(qtbot, open_window, tmp_path, image_file):
    from inspector.core.graph.draw.figure import ALARM
    from inspector.core.graph.values.entry import graph_values
    from inspector.core.inputs.files import load_input
    from inspector.core.sources.loader import load_model

    (tmp_path / "nan.py").write_text(NAN_MODEL)
    source = f"{tmp_path / 'nan.py'}:MakesNaN"
    window = open_window(source, image_file)
    graph = show_graph(qtbot, window)
    values = colour_by(qtbot, window, "nan")
    loaded = load_model(source, trust=True)
    want = graph_values(loaded, load_input(image_file, loaded.preprocess, loaded.input_shape), graph.graph)
    want = want.for_view(graph.layout.graph)
    assert want.first_nonfinite and len(want.nonfinite_path) >= 3
    assert window.views.graph.scene.nodes[want.first_nonfinite].fill == QColor(*ALARM)
    assert values.painter.outlined() == {k: QColor(*ALARM) for k in want.nonfinite_path}
    assert want.first_nonfinite in values.bar.legend.text()
    assert "NaN" in hover(window, want.first_nonfinite)


def test_divergence_against_a_second_checkpoint_is_the_compare_tabs(qtbot, ui, demo, tmp_path):
    """A graph diff of two checkpoints: conv2's weights x1.5 in the second; the colours are compare_runs' change
    (called here), equal to the Compare tab's relative L2 per captured layer; conv2 outlined, the first
    divergent."""
    from safetensors.torch import save_file

    from inspector.core.graph.values.entry import compare_models
    from inspector.core.sources.loader import load_model

    graph = show_graph(qtbot, demo)
    loaded, x = model_and_input(demo)
    state = {k: v.detach().clone().contiguous() for k, v in loaded.module.state_dict().items()}
    state["conv2.weight"] = state["conv2.weight"] * 1.5
    save_file(state, str(tmp_path / "b.safetensors"))
    demo.against.choose_weights(str(tmp_path / "b.safetensors"))
    outcome = ui.expect_result(qtbot, demo)
    values = colour_by(qtbot, demo, "divergence")
    second = load_model("demo", str(tmp_path / "b.safetensors"))
    want = compare_models(loaded, second, x, graph.graph).for_view(graph.layout.graph)
    assert want.first_divergent == "conv2" and want.change["conv1"] == 0
    assert want.change["conv2"] == pytest.approx(0.5, rel=1e-5)
    scale = Scale.of(v for v in want.change.values() if math.isfinite(v))
    shown = fills(demo)
    assert all(shown[k] == QColor(*colour_at(scale.at(v))) for k, v in want.change.items() if k in shown)
    assert values.painter.outlined() == {"conv2": QColor(200, 0, 160)}
    rows = {r.key.partition(":")[0]: r.rel_l2 for r in outcome.against.rows if r.key.endswith(":output")}
    checked = [k for k in rows if k in want.change]
    assert checked  # the Compare tab's numbers, layer by layer
    assert all(want.change[k] == pytest.approx(rows[k], rel=1e-4, abs=1e-7) for k in checked)
    assert "conv2" in values.bar.legend.text()
    # the caption and the saved figure name the demo's weights as the command line does: bundled, not random
    said = "relative L2 divergence, demo (b.safetensors) vs demo (bundled)"
    assert values.bar.title.text().startswith(said)
    saved = ET.parse(demo.save_figure(str(tmp_path / "graph.svg"))).getroot()
    assert " ".join(t.text for t in saved.iter(f"{SVG}text") if t.get("class") == "bar-title") == "Colour: " + said


def test_a_choice_that_lacks_its_edit_or_second_model_says_what_to_do(qtbot, demo):
    show_graph(qtbot, demo)
    values = demo.graph_values
    values.choose("change")
    assert "add one" in values.bar.title.text() and "Edits dock" in values.bar.title.text()
    values.choose("divergence")
    assert "Against" in values.bar.title.text() and values.painter.drawn is None
    assert not values.bar.strip.isVisible()


def test_another_input_colours_its_own_graph(qtbot, demo):
    from inspector.core.graph.values.entry import graph_values

    graph = show_graph(qtbot, demo)
    values = colour_by(qtbot, demo, "activation")
    first = graph.graph
    demo.state.set_input(f"sample:{list_samples()[1]}")
    qtbot.waitUntil(lambda: graph.graph is not None and graph.graph is not first and graph.layout is not None,
                    timeout=60_000)
    qtbot.waitUntil(lambda: values.found is not None and values.key == values.request_key()
                    and values.painter.drawn is not None, timeout=60_000)
    loaded, x = model_and_input(demo)
    want = overlay_of(graph_values(loaded, x, graph.graph).for_view(graph.layout.graph), "activation")
    assert {k: c for k, c in fills(demo).items() if c is not None} == {k: QColor(*c) for k, c in want.fills.items()}


def test_the_choice_is_kept_for_the_next_session(qtbot, demo, open_window, settings):
    show_graph(qtbot, demo)
    colour_by(qtbot, demo, "zeros")
    again = open_window(settings_=settings)
    assert again.graph_values.kind == "zeros"
    show_graph(qtbot, again)
    colour_by(qtbot, again, "zeros")
    assert any(c is not None for c in fills(again).values())


def test_hovering_an_edge_says_its_gradients_norm(qtbot, demo):
    from PySide6.QtWidgets import QApplication

    from inspector.gui.views.graph.items import EdgeItem

    show_graph(qtbot, demo)
    colour_by(qtbot, demo, "gradient")
    loaded, x = model_and_input(demo)  # by hand: conv2's output and its gradient from the top class
    kept = {}
    handle = loaded.module.conv2.register_forward_hook(lambda _m, _a, out: kept.setdefault("out", out))
    x = x.clone().requires_grad_(True)
    try:
        logits = loaded.module(x)
    finally:
        handle.remove()
    kept["out"].retain_grad()
    logits[0, logits[0].argmax()].backward()
    grad = kept["out"].grad.norm().item()
    scene, view = demo.views.graph.scene, demo.views.graph.view
    item = next(i for i in scene.items() if isinstance(i, EdgeItem) and i.key == ("conv2", "bn2", None))
    said = f"conv2 → bn2: {item.edge.label} · gradient L2 = {grad:.3g}"
    assert item.toolTip() == said + item.tip[len(item.tip.partition("\n")[0]):]
    a, b = item.points[0], item.points[1]
    view.centerOn((a + b) / 2)
    pos = view.mapFromScene((a + b) / 2)
    QApplication.sendEvent(view.viewport(), QMouseEvent(QEvent.MouseMove, QPointF(pos),
                                                        QPointF(view.viewport().mapToGlobal(pos)), Qt.NoButton,
                                                        Qt.NoButton, Qt.NoModifier))
    assert demo.views.graph.status.text() == said
    demo.graph_values.choose("none")
    assert item.toolTip() == item.tip and "gradient" not in item.tip
