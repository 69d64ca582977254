"""Live edits from the UI: presets against the core API, order, coalescing, comparison, sessions."""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core import capture, load_input, load_model
from inspector.core.session.file import load_session, save_session
from inspector.core.workbench import Workbench
from inspector.gui.state.sessions import session_of

TOY = "inspector.demo.toy:ToyMLP"
TICKS = {"fc1", "relu1", "fc2"}


def core(edits, sites="output,grad_output"):
    model = load_model(TOY)
    return capture(model, load_input("sample:toy_ones"), layers=sorted(TICKS), sites=sites, edits=edits,
                   target="sum", input_grad=True)


@pytest.fixture
def toy_window(open_window):
    """The toy model with the Compare tab shown (so runs with edits include the input gradient)."""
    window = open_window(TOY, "sample:toy_ones", TICKS)
    window.tabs.setCurrentWidget(window.views.compare)
    return window


def test_input_gradient_only_while_the_comparison_shows(ui, qtbot, open_window):
    window = open_window(TOY, "sample:toy_ones", TICKS)
    window.state.editing.add_text("relu1:grad_output=scale(2)")
    on_layer_tab = ui.expect_result(qtbot, window)
    assert on_layer_tab.result.input_grad is None  # backward stops at the earliest ticked site
    window.tabs.setCurrentWidget(window.views.compare)  # asks for a run with the input gradient
    compared = ui.expect_result(qtbot, window)
    np.testing.assert_array_equal(compared.result.input_grad, [[44, 52, 60]])
    np.testing.assert_array_equal(compared.baseline.input_grad, [[22, 26, 30]])


def rerun_with(ui, qtbot, window, change):
    """Apply `change` (which edits the panel) and wait for the run it triggers."""
    change()
    return ui.expect_result(qtbot, window)


def test_scaling_relu_gradient_doubles_bias_and_input_gradients(ui, qtbot, toy_window):
    """The tutorial's example, live: relu1's gradient x2 -> fc1's bias grad and the input grad double."""
    w = toy_window
    w.grad_site_combo.setCurrentText("bias gradient")
    w.state.select_grad_site(w.grad_site_combo.currentText())
    base = ui.expect_result(qtbot, w)
    np.testing.assert_array_equal(base.result["fc1.bias:grad"], [1, 0, 3, 0])
    out = rerun_with(ui, qtbot, w, lambda: w.state.editing.apply_preset("Scale layer gradient by k", "relu1", 2.0))
    np.testing.assert_array_equal(out.result["fc1.bias:grad"], [2, 0, 6, 0])
    np.testing.assert_array_equal(out.result["input:grad"], [[44, 52, 60]])
    np.testing.assert_array_equal(out.baseline["input:grad"], [[22, 26, 30]])  # kept for the comparison
    assert str(w.views.edits_panel.edits()[0]) == "relu1:grad_output=scale(k=2.0)"


@pytest.mark.parametrize("preset, layer, key", [
    ("Guided backprop (every ReLU, GELU, SiLU… grad_input ≥ 0)", "", "fc1:grad_output"),
    ("Clamp layer grad_output ≥ 0", "fc2", "relu1:grad_output"),
    ("Scale layer gradient by k", "fc1", "fc1:grad_output"),
])
def test_each_preset_matches_the_core_api(ui, qtbot, toy_window, preset, layer, key):
    w = toy_window
    out = rerun_with(ui, qtbot, w, lambda: w.state.editing.apply_preset(preset, layer, 3.0))
    edits = [str(e) for e in w.views.edits_panel.edits()]
    expected = core(edits)
    for name, array in expected.arrays().items():
        np.testing.assert_allclose(out.result[name], array, err_msg=name)
    if preset.startswith("Scale"):  # k = 3 on fc1's grad_output [[1, 0, 3, 0]]
        np.testing.assert_array_equal(out.result[key], [[3, 0, 9, 0]])
    else:  # the toy's gradients are already >= 0: the clamps change nothing, and must not
        np.testing.assert_array_equal(out.result[key], out.baseline[key])


def test_zero_all_bias_gradients(ui, qtbot, toy_window):
    w = toy_window
    w.grad_site_combo.setCurrentText("bias gradient")
    w.state.select_grad_site(w.grad_site_combo.currentText())
    ui.expect_result(qtbot, w)
    out = rerun_with(ui, qtbot, w, lambda: w.state.editing.apply_preset("Zero all bias gradients"))
    assert [str(e) for e in w.views.edits_panel.edits()] == ["fc1.bias:grad=zero()", "fc2.bias:grad=zero()"]
    np.testing.assert_array_equal(out.result["fc1.bias:grad"], [0, 0, 0, 0])
    np.testing.assert_array_equal(out.result["fc2.bias:grad"], [0])
    np.testing.assert_array_equal(out.result["fc1.weight:grad"], [[1, 1, 1], [0, 0, 0], [3, 3, 3], [0, 0, 0]])


def test_order_of_edits_on_one_key_matters_and_can_be_changed(ui, qtbot, toy_window):
    """scale(2) then clamp(max=3) on relu1's grad_output [1,2,3,4] -> [2,3,3,3]; the reverse -> [2,4,6,6]."""
    w, panel, editing = toy_window, toy_window.views.edits_panel, toy_window.state.editing
    first = rerun_with(ui, qtbot, w, lambda: (editing.add_text("relu1:grad_output=scale(2)"),
                                              editing.add_text("relu1:grad_output=clamp(max=3)")))
    np.testing.assert_array_equal(first.result["relu1:grad_output"], [[2, 3, 3, 3]])
    panel.list.setCurrentRow(1)
    swapped = rerun_with(ui, qtbot, w, lambda: panel.sigMove.emit(panel.list.currentRow(), -1))  # "Up"
    assert [e.op for e in panel.edits()] == ["clamp", "scale"] and panel.list.currentRow() == 0
    np.testing.assert_array_equal(swapped.result["relu1:grad_output"], [[2, 4, 6, 6]])
    off = rerun_with(ui, qtbot, w, editing.all_off)
    np.testing.assert_array_equal(off.result["relu1:grad_output"], [[1, 2, 3, 4]])
    assert off.baseline is None  # nothing on: no comparison to make


def test_invalid_text_says_why_and_changes_nothing(toy_window):
    panel, editing = toy_window.views.edits_panel, toy_window.state.editing
    panel.text.setText("relu1:grad_input=explode(3)")
    panel.text.returnPressed.emit()  # typed and Enter: the state refuses it, the text stays to be fixed
    assert "Unknown op 'explode'" in panel.message.text() and panel.text.text() == "relu1:grad_input=explode(3)"
    assert not editing.add_text("nowhere")
    assert panel.edits() == () == toy_window.state.edits


def test_twenty_toggles_coalesce(ui, qtbot, toy_window):
    w, editing = toy_window, toy_window.state.editing
    rerun_with(ui, qtbot, w, lambda: editing.add_text("relu1:grad_output=scale(2)"))
    before = w.worker.runs_done
    for i in range(20):
        editing.set_enabled(0, i % 2 == 0)  # ends disabled... then one more toggle on
        qtbot.wait(10)
        assert w.worker.pending() <= 1
    editing.set_enabled(0, True)
    # the result of the 20th toggle may still arrive (and be drawn) before the last one's run starts
    qtbot.waitUntil(lambda: not w.state.timer.isActive() and w.worker.pending() == 0 and w.outcome is not None
                    and w.outcome.run_id == w.state.last_run_id, timeout=20_000)
    last = w.outcome
    qtbot.wait(300)
    assert w.worker.runs_done - before <= 21  # never more runs than changes: no backlog replayed
    assert w.outcome is last and w.worker.pending() == 0
    np.testing.assert_array_equal(last.result["input:grad"], [[44, 52, 60]])


def test_channel_ablation_from_the_mosaic(ui, qtbot, open_window, tiny_source, image_file):
    w = open_window(tiny_source, image_file)
    layer = w.current_layer()
    w.views.edits_panel.ablate.setChecked(True)
    out = rerun_with(ui, qtbot, w, lambda: w.activation_panel.sigChannelClicked.emit(1))
    assert [str(e) for e in w.views.edits_panel.edits()] == [f"{layer}:output=zero_channels(channels=[1])"]
    act = out.result[f"{layer}:output"]
    assert np.all(act[:, 1] == 0) and np.any(act[:, 0] != 0)
    w.views.edits_panel.ablate.setChecked(False)


def test_session_round_trip_and_headless_replay(ui, qtbot, toy_window, open_window, tmp_path, settings):
    w = toy_window
    w.grad_site_combo.setCurrentText("weight gradient")
    w.state.select_grad_site(w.grad_site_combo.currentText())
    ui.expect_result(qtbot, w)
    shown = rerun_with(ui, qtbot, w, lambda: w.state.editing.add_text("relu1:grad_input=clamp(min=0, max=2)"))
    path = save_session(session_of(w.state), tmp_path / "live.inspector.json")
    session = load_session(path, trust=True)
    assert session.layers == tuple(sorted(TICKS, key=["fc1", "relu1", "fc2"].index))
    assert [str(e) for e in session.edits] == ["relu1:grad_input=clamp(min=0, max=2)"]
    replay = Workbench().execute(session.run_request(trust=True, baseline=True)).result
    for name in ("fc1:grad_output", "fc1.weight:grad", "input:grad"):
        np.testing.assert_array_equal(replay[name], shown.result[name], err_msg=name)
    # and a second window loads it back
    other = open_window(TOY, "sample:toy_ones", TICKS)
    assert other.edits.load(str(path), trust=True)
    loaded = ui.expect_result(qtbot, other)
    assert [str(e) for e in other.edits.panel.edits()] == ["relu1:grad_input=clamp(min=0, max=2)"]
    np.testing.assert_array_equal(loaded.result["fc1.weight:grad"], shown.result["fc1.weight:grad"])
