"""The app as a product: one state, failures that leave what is loaded, errors people see,
menus, the device a session asks for, what the form and presets act on. (Issue 11's items.)"""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDockWidget

from inspector.gui.state.sessions import session_of


def test_a_model_that_fails_to_load_leaves_the_loaded_one(ui, qtbot, window, gui_files, tiny_source, settings):
    """Item 1: the chooser shows what is loaded, F5 re-runs it, the failed file is not run again or saved."""
    broken = gui_files / "broken_model.py"
    broken.write_text("import sys\nsys.modules.setdefault('BROKEN_RUNS', []).append(1)\nraise RuntimeError('boom')\n")
    window.model_combo.setCurrentText(f"{broken}:Net")
    window.model_combo.lineEdit().returnPressed.emit()  # typed and Enter, as a user would
    message = ui.expect_failure(qtbot, window)
    assert "boom" in message and str(broken) in message
    assert window.model_combo.currentText() == tiny_source
    assert window.state.model.source == tiny_source and window.state.loading is None
    assert f"Still on {tiny_source}" in window.banner.text()
    runs_of_file = len(sys.modules["BROKEN_RUNS"])
    window.run_action.trigger()  # F5
    outcome = ui.expect_result(qtbot, window)
    assert {c.key.layer for c in outcome.result.captures.values()} == {"features.0", "features.3", "fc"}
    assert len(sys.modules["BROKEN_RUNS"]) == runs_of_file  # the failed file was not executed again
    settings.sync()
    assert settings.value("model/source") == tiny_source


def test_a_saved_code_source_asks_for_trust_at_launch(ui, qtbot, open_window, tiny_source, image_file, settings):
    """Item 1: on the next launch nothing that runs code loads without the trust prompt."""
    settings.setValue("model/source", tiny_source)
    settings.setValue("model/trust", True)  # what older versions wrote: never honoured now
    settings.setValue("input", image_file)
    asked = []

    from inspector.gui.window.main_window import MainWindow

    window = MainWindow(settings=settings, ask_trust=lambda name, what: asked.append((name, what)) or False)
    window.show()
    outcome = ui.expect_result(qtbot, window)
    try:
        assert asked and asked[0][0] == tiny_source and "runs code" in asked[0][1]
        assert window.state.model.source == "demo"  # refused: the demo, nothing of the file was run
        assert outcome.result.input.shape == (1, 3, 64, 64)
    finally:
        window.close()
        window.deleteLater()


def test_a_saved_choice_that_no_longer_loads_falls_back_to_the_demo(ui, qtbot, open_window, gui_files):
    gone = str(gui_files / "deleted_since.py") + ":Net"
    window = open_window(gone, None, expect="failure")
    assert "Python file not found" in window.first_failure
    ui.expect_result(qtbot, window)
    assert window.state.model.source == "demo"
    assert window.model_combo.currentText() == "demo"
    assert "Could not load" in window.banner.text() and "Opened the demo model instead" in window.banner.text()
    assert window.banner.notice.level == "error"


def test_switching_to_a_parameter_the_layer_lacks_says_so(ui, qtbot, open_window):
    """Item 2: demo's conv1 has no bias; the gradient panel says so instead of an old picture."""
    window = open_window("demo", "sample:star", {"conv1", "bn1"})
    window.show_layer("conv1")
    window.grad_site_combo.setCurrentText("bias gradient")
    window.grad_site_combo.activated.emit(window.grad_site_combo.currentIndex())
    ui.expect_result(qtbot, window)
    assert window.gradient_panel.mosaic is None
    assert "conv1 has no bias parameter (it has weight)" in window.gradient_panel.stats.text()
    window.grad_site_combo.setCurrentText("weight gradient")
    window.grad_site_combo.activated.emit(window.grad_site_combo.currentIndex())
    assert window.gradient_panel.key == "conv1.weight:grad"  # captured already: drawn without a run


def test_the_form_and_presets_follow_the_selected_layer(ui, qtbot, window):
    """Item 4: the Edits form follows the Layer tab; a one-layer preset names the layer it changed."""
    window.show_layer("features.3")
    panel = window.views.edits_panel
    assert panel.layer.currentText() == "features.3"
    panel.choose_preset("Clamp layer grad_output ≥ 0")  # as the Presets menu does
    out = ui.expect_result(qtbot, window)
    assert [str(e) for e in panel.edits()] == ["features.3:grad_output=clamp(min=0)"]
    assert panel.message.text() == "Clamp layer grad_output ≥ 0 on features.3: 1 edit(s)"
    assert out.result["features.3:grad_output"].min() >= 0


def test_a_session_device_this_machine_lacks_is_offered_the_cpu(ui, qtbot, window, tmp_path, gui_files):
    """Item 7: never a silent device change. Issue 41, item 5: nothing of the session is chosen until the device
    is (the Input chooser said the session's input while the panels stayed on the previous one); the banner
    offers the whole session on the CPU."""
    session = session_of(window.state)
    data = json.loads(json.dumps(session.to_dict()))
    data["device"] = "cuda:7"
    data["input"] = str(gui_files / "other.png")  # 36x36, where the window shows the 48x40 image.png
    path = tmp_path / "gpu.inspector.json"
    path.write_text(json.dumps(data))
    shown, runs = window.outcome, window.worker.runs_done
    before = window.input_combo.currentText()
    assert window.edits.load(str(path), trust=True)
    assert window.state.device == "cpu" and window.device_combo.device() == "cpu"
    assert window.state.input == before and window.input_combo.currentText() == before
    assert "ran on 'cuda:7'" in window.banner.text() and "Nothing of it is loaded yet" in window.banner.text()
    assert window.banner.action_button.isVisible() and window.banner.action_button.text() == "Load it on the CPU"
    qtbot.wait(300)
    assert window.worker.runs_done == runs and window.outcome is shown  # nothing ran, the panels are as they were
    window.banner.action_button.click()
    outcome = ui.expect_result(qtbot, window)
    assert window.state.device == "cpu" and outcome.result.device == "cpu"
    assert window.input_combo.currentText() == data["input"] and window.state.shown_choice[0] == data["input"]
    assert not np.array_equal(outcome.result.input, shown.result.input)  # the panels show the session's image


def test_a_restored_device_this_machine_lacks_loads_the_model_and_offers_the_cpu(ui, qtbot, open_window, settings,
                                                                                tiny_source, image_file):
    """Settings from another machine: the model used to load on the missing device before the engine had
    listed the devices ("Could not load ...: CUDA is not available"); now it loads, and runs wait for a choice."""
    settings.setValue("device", "cuda:7")
    window = open_window(tiny_source, image_file, expect=None)
    qtbot.waitUntil(lambda: window.state.model is not None and window.state.loading is None, timeout=20_000)
    assert window.state.device == "cuda:7" and "Could not load" not in window.banner.text()
    assert "no device 'cuda:7'" in window.banner.text() and window.banner.action_button.text() == "Use the CPU"
    window.banner.action_button.click()
    outcome = ui.expect_result(qtbot, window)
    assert window.state.device == "cpu" and outcome.result.device == "cpu"


def test_a_device_named_by_its_kind_is_the_first_listed_of_that_kind(window):
    """`--device cuda` in the self-test and the GUI bench, or "device": "cuda" in a session, is the engine's
    `cuda:0`: it was taken for a device this machine lacks, and no run was made."""
    state = window.state
    window.auto_run.setChecked(False)
    state.device = "cuda"  # as restored from the settings, before the engine lists the devices
    state._on_engine_ready([("cpu", "CPU"), ("cuda:0", "GPU 0"), ("cuda:1", "GPU 1")])  # as two GPUs are listed
    combo = window.device_combo
    assert state.device == "cuda:0" and "no device" not in window.banner.text()
    assert [combo.itemData(i) for i in range(combo.count())] == ["cpu", "cuda:0", "cuda:1"]  # no "cuda" added
    assert combo.currentText() == "cuda:0 — GPU 0"
    state.set_device(" CUDA")
    assert state.device == "cuda:0"
    state.set_device("cuda:1")
    assert state.device == "cuda:1" and combo.currentText() == "cuda:1 — GPU 1"
    state.set_device(" mps")
    assert state.device == "mps" and "no device 'mps'" in window.banner.text()


def test_nan_is_named_and_shown(ui, qtbot, open_window, gui_files, image_file):
    """Item 8: the first non-finite layer is named in the banner and marked in the tree."""
    window = open_window(ui.source(gui_files, "Nan"), image_file, {"features.3", "poison", "fc"})
    qtbot.waitUntil(lambda: window.banner.notice is not None and window.banner.notice.level == "warning")
    assert "The first NaN/Inf (forward) is at poison:output" in window.banner.text()
    assert window.layer_model._highlight == "poison"


def test_nan_in_the_input_is_named_in_the_banner(ui, qtbot, open_window, tiny_source, tmp_path):
    """Issue 15: NaN/Inf in the input itself is a warning in the banner (not a module to mark)."""
    x = np.zeros((1, 3, 32, 32), np.float32)
    x[0, 0, 0, 0] = np.nan
    path = tmp_path / "nan.npy"
    np.save(path, x)
    window = open_window(tiny_source, str(path), {"fc"})
    qtbot.waitUntil(lambda: window.banner.notice is not None and window.banner.notice.level == "warning")
    assert "The model's input holds NaN/Inf" in window.banner.text()
    assert window.layer_model._highlight is None
    assert "The model's input holds 1 NaN of 3072 values" in window.first_outcome.result.warnings[0]


def test_errors_are_kept_copyable_with_details(qtbot, window):
    """Item 10: an unexpected error shows the whole message and its traceback, copyable; it stays."""
    from inspector.core.records.failure import Failure

    window.state._on_failed(Failure("Unexpected KeyError: 'x'", "run", "KeyError", 0, False,
                                    "Traceback (most recent call last):\n  File ...\nKeyError: 'x'"))
    banner = window.banner
    assert banner.isVisible() and banner.label.text() == "Error: Unexpected KeyError: 'x'"
    assert banner.details_button.isVisible() and not banner.details.isVisible()
    banner.details_button.click()
    assert banner.details.isVisible() and "Traceback" in banner.details.toPlainText()
    banner.copy_button.click()
    assert QGuiApplication.clipboard().text().startswith("Error: Unexpected KeyError: 'x'\n\nTraceback")
    qtbot.wait(50)
    assert not banner.timer.isActive()  # errors stay until closed
    banner.close_button.click()
    assert not banner.isVisible()


def test_saving_a_view_and_an_export_confirm_where_they_wrote(window, tmp_path):
    png = window.save_png(str(tmp_path / "view.png"))
    assert png is not None and png.is_file()
    assert f"to {png.resolve()}" in window.banner.text()
    window.analysis.export(str(tmp_path / "caps.npz"))
    assert (tmp_path / "caps.npz").is_file() and f"{tmp_path / 'caps.npz'}" in window.banner.text()
    assert window.save_png(str(tmp_path / "new" / "folder" / "v.png")).is_file()  # folders are made, as the CLI does
    assert window.save_png(str(tmp_path / "view.png" / "v.png")) is None  # under a file
    assert window.banner.notice.level == "error" and "Could not write" in window.banner.text()
    assert f"{tmp_path / 'view.png'} is a file, not a folder" in window.banner.text()


def test_a_run_shows_its_phase_and_elapsed_time(ui, qtbot, open_window, slow_source, image_file):
    """Item 11: a busy indicator with the phase (forward, backward, drawing) and the time since the run began."""
    window = open_window(slow_source, image_file, ticks=ui.SLOW_TICKS)
    phases = []
    window.state.sigPhase.connect(phases.append)
    window.run_action.trigger()
    qtbot.waitUntil(lambda: window.run_status.text().startswith("Running forward…"), timeout=10_000)
    assert window.run_status.busy.isVisible()
    ui.expect_result(qtbot, window)
    qtbot.waitUntil(lambda: window.run_status.text() == "", timeout=10_000)
    window.state.sigPhase.disconnect(phases.append)
    assert not window.run_status.busy.isVisible()
    order = [p for p in phases if p]  # (the first result's statistics may still be on their way)
    run = order[order.index("Preparing the run"):]
    assert run[:3] == ["Preparing the run", "Running forward", "Running backward"]


def test_menus_a_desktop_user_expects(window):
    """Item 12: View lists every dock and resets the layout; Attribution (issue 55: Evaluate…); Help; Quit; the
    shortcuts."""
    menus = {a.text().replace("&", ""): a.menu() for a in window.menuBar().actions()}
    assert list(menus) == ["File", "View", "Attribution", "Help"]
    assert [a.text() for a in menus["Attribution"].actions()] == ["Evaluate…", "Open evaluation…"]
    view = [a.text() for a in menus["View"].actions() if a.text()]
    docks = [d.windowTitle() for d in window.findChildren(QDockWidget)]
    assert set(docks) <= set(view) and len(docks) == 6
    assert {"Reset layout", "Next layer", "Previous layer"} <= set(view)
    shortcuts = {a.text(): a.shortcut().toString() for a in window.actions()}
    assert shortcuts["Open model…"] == "Ctrl+O" and shortcuts["Open input…"] == "Ctrl+I"
    assert shortcuts["Save session…"] == "Ctrl+S" and shortcuts["Quit"] == "Ctrl+Q"
    assert shortcuts["Next layer"] == "Alt+Down" and shortcuts["Previous layer"] == "Alt+Up"
    from inspector.gui.window.menus import about_text, shortcuts_text

    assert "PySide6" in about_text() and "torch" in about_text()
    assert "Ctrl+O" in shortcuts_text()
    first = window.layer_combo.currentText()
    next(a for a in window.actions() if a.text() == "Next layer").trigger()
    assert window.layer_combo.currentIndex() == 1 and window.activation_panel.key.startswith("features.3")
    next(a for a in window.actions() if a.text() == "Previous layer").trigger()
    assert window.layer_combo.currentText() == first
    modules = window.modules_dock
    modules.close()
    window.reset_layout()
    assert modules.isVisible()


def test_the_window_fits_a_1280x800_screen(window):
    """Item 6: minimum size at most 1200x720; at 1280x800 the status bar and every chooser are visible."""
    hint = window.minimumSizeHint().expandedTo(window.minimumSize())
    assert hint.width() <= 1200 and hint.height() <= 720
    window.resize(1280, 800)
    window.repaint()
    assert window.statusBar().isVisible() and window.statusBar().geometry().bottom() <= 800
    bar = window.findChild(type(window.addToolBar("probe")), "toolbar")
    for widget in (window.model_combo, window.weights_combo, window.input_combo, window.device_combo,
                   window.target_combo, window.auto_run):
        assert widget.isVisible(), f"{type(widget).__name__} is pushed out of the toolbar at 1280 wide"
        assert widget.geometry().right() <= bar.width()


def test_statistics_of_the_other_layers_follow_the_result(ui, qtbot, window):
    """Statistics off the critical path: the result drawn first has the shown layer's statistics only;
    the worker sends the rest and the diagnostics afterwards, and the tabs fill in from them."""
    s = window.state
    at_result, updated = [], []

    def record(outcome):
        at_result.append({n: c.stats is not None for n, c in outcome.result.captures.items()})

    def mine(outcome):  # the updates of this run only: the window's first run may still be sending its own
        if outcome.run_id == s.last_run_id:
            updated.append(outcome)

    s.sigResult.connect(record)
    s.sigStatsUpdated.connect(mine)
    try:
        window.run_action.trigger()
        qtbot.waitUntil(lambda: len(updated) >= 2, timeout=20_000)  # the statistics, then the diagnostics
    finally:
        s.sigResult.disconnect(record)
        s.sigStatsUpdated.disconnect(mine)
    assert len(updated) == 2
    layer = s.layer
    assert layer == "features.0"  # the first ticked layer is the one shown
    had = at_result[-1]
    assert set(had) == {f"{l}:{site}" for l in ("features.0", "features.3", "fc") for site in ("output", "grad_output")}
    assert {n for n, has in had.items() if has} == {"features.0:output", "features.0:grad_output"}
    outcome = updated[-1]
    assert updated[0] is outcome is s.outcome and outcome.complete and outcome.analysis is not None
    for name, capture in outcome.result.captures.items():
        array = capture.array.astype(np.float64)
        assert capture.stats.mean == pytest.approx(array.mean(), rel=1e-5, abs=1e-9), name
        assert capture.stats.max == pytest.approx(array.max(), rel=1e-6), name
    window.tabs.setCurrentWidget(window.views.stats)
    rows = {row["key"]: row for row in window.views.stats.rows}
    fc = outcome.result.captures["fc:output"].array.astype(np.float64)
    assert rows["fc:output"]["std"] == pytest.approx(fc.std(), rel=1e-5)
    assert window.views.flow.rows == []  # a hidden tab is drawn when it is shown
    window.tabs.setCurrentWidget(window.views.flow)
    assert [r.key for r in window.views.flow.rows] == [f"{l}:grad_output" for l in ("features.0", "features.3", "fc")]


def test_the_window_links_the_enlarged_channel_and_the_compare_picker(ui, qtbot, window):
    """Item 13 in the window: enlarging a channel on one side enlarges it on the other; the Compare
    tab's own picker lists the captured layers and choosing one shows it in every tab."""
    act, grad = window.activation_panel, window.gradient_panel
    assert (act.key, grad.key) == ("features.0:output", "features.0:grad_output")
    gradient = window.state.outcome.result.captures["features.0:grad_output"].array
    act.sigChannelZoomed.emit(3)
    assert grad.channel == 3
    np.testing.assert_array_equal(grad.zoom_image.image, gradient[0, 3])
    grad.sigChannelZoomed.emit(1)
    assert act.channel == 1
    window.tabs.setCurrentWidget(window.views.compare)
    picker = window.views.compare.layer
    assert [picker.itemData(i) for i in range(picker.count())] == ["features.0", "features.3", "fc"]
    assert picker.currentData() == "features.0"
    picker.setCurrentIndex(2)
    assert window.state.layer == "fc" and window.layer_combo.currentData() == "fc"
    assert window.views.edits_panel.layer.currentText() == "fc"
    assert act.key == "features.0:output"  # the hidden Layer tab is drawn when it is shown
    window.tabs.setCurrentWidget(window.tabs.widget(0))
    assert act.key == "fc:output" and grad.key == "fc:grad_output"


def test_random_weights_seed_is_shown_saved_and_gives_the_cli_the_same_weights(ui, qtbot, open_window, monkeypatch,
                                                                                 tmp_path, gui_files, image_file):
    """Item 5: a typed seed is shown, stored in the session file, and the CLI's --seed builds the same weights."""
    from PySide6.QtWidgets import QInputDialog

    from inspector.cli import main

    source = ui.source(gui_files, "Unseeded")
    window = open_window(source, image_file, {"conv", "fc"})
    monkeypatch.setattr(QInputDialog, "getInt", staticmethod(lambda *args, **kwargs: (1234, True)))
    combo = window.weights_combo

    def entry(data) -> int:
        return next(i for i in range(combo.count()) if tuple(combo.itemData(i)) == data)

    i = entry(("seed", None))
    combo.setCurrentIndex(i)
    combo.activated.emit(i)
    outcome = ui.expect_result(qtbot, window)
    assert window.state.model.seed == 1234 and combo.currentText() == "random (seed 1234)"
    session = tmp_path / "seeded.inspector.json"
    window.edits.save(str(session))
    assert json.loads(session.read_text())["model"]["seed"] == 1234
    out = tmp_path / "cli.npz"
    assert main(["capture", "--model", source, "--weights", "random", "--seed", "1234", "--input", image_file,
                 "--layers", "fc", "--sites", "output", "--out", str(out)]) == 0
    np.testing.assert_array_equal(np.load(out)["fc:output"], outcome.result.captures["fc:output"].array)
    combo.activated.emit(entry(("random", None)))  # a new seed each time it is chosen
    again = ui.expect_result(qtbot, window)
    first_new = window.state.model.seed
    assert first_new != 1234
    combo.activated.emit(entry(("random", None)))
    ui.expect_result(qtbot, window)
    assert window.state.model.seed not in (1234, first_new)
    assert not np.array_equal(again.result.captures["fc:output"].array, outcome.result.captures["fc:output"].array)


def test_attention_heads_for_a_query_token_picked_on_the_input(ui, qtbot, open_window, gui_files, image_file):
    """Issue 12 in the app: the attention site per head, for the class token, then for a clicked patch."""
    import torch

    from inspector.core.records.tokens import TokenGrid

    window = open_window(ui.source(gui_files, "TinyViT"), image_file, {"attn", "head"})
    assert window.state.model.tokens == TokenGrid(4, 4, 1)
    window.layer_combo.setCurrentIndex(window.layer_combo.findData("attn"))
    window.grad_site_combo.setCurrentText("attention (per head)")
    window.state.select_grad_site(window.grad_site_combo.currentText())
    outcome = ui.expect_result(qtbot, window)
    probs = outcome.result.captures["attn:attention"].array  # (1, 2 heads, 17, 17)
    panel = window.gradient_panel
    assert panel.key == "attn:attention" and panel.mosaic.total == 2 and (panel.mosaic.tile_h, panel.mosaic.tile_w) == (4, 4)
    np.testing.assert_array_equal(panel.maps[1], probs[0, 1, 0, 1:].reshape(4, 4))  # the class token's row
    assert "what the class token attends to" in panel.title.text()
    # the same probabilities by hand: PyTorch's own weights on the attention module's input
    model = window.state.worker.bench.loaded.module
    x = torch.from_numpy(outcome.result.input)
    t = model.patch_embed(x).flatten(2).transpose(1, 2)
    t = torch.cat([model.cls.expand(1, -1, -1), t], dim=1)
    _, expected = model.attn(t, t, t, need_weights=True, average_attn_weights=False)
    np.testing.assert_allclose(probs, expected.detach().numpy(), rtol=1e-5, atol=1e-6)
    runs = window.worker.runs_done
    window.input_view.sigClicked.emit(0.6, 0.3)  # row 2, column 1 of the 4 x 4 grid: token 1 + 2 * 4 + 1
    assert window.state.query == 10 and window.worker.runs_done == runs  # drawn again, not run again
    np.testing.assert_array_equal(panel.maps[0], probs[0, 0, 10, 1:].reshape(4, 4))
    assert "what patch (2, 1) attends to" in panel.title.text()


def test_clicking_a_heads_attention_map_ablates_that_head(ui, qtbot, open_window, gui_files, image_file):
    """Issue 12 in the app: head ablation from the attention mosaic, like channel ablation."""
    window = open_window(ui.source(gui_files, "TinyViT"), image_file, {"attn", "head"})
    window.layer_combo.setCurrentIndex(window.layer_combo.findData("attn"))
    window.grad_site_combo.setCurrentText("attention (per head)")
    window.state.select_grad_site(window.grad_site_combo.currentText())
    before = ui.expect_result(qtbot, window)
    window.views.edits_panel.ablate.setChecked(True)
    window.gradient_panel.sigChannelClicked.emit(1)
    after = ui.expect_result(qtbot, window)
    assert [str(e) for e in window.views.edits_panel.edits()] == ["attn:attention=zero_heads(heads=[1])"]
    assert not np.allclose(after.result.output, before.result.output)  # head 1 no longer contributes
    window.gradient_panel.sigChannelClicked.emit(1)  # again: restored
    restored = ui.expect_result(qtbot, window)
    assert list(window.views.edits_panel.edits()) == [] and np.allclose(restored.result.output, before.result.output)
    window.views.edits_panel.ablate.setChecked(False)


def test_the_model_list_offers_torchvision_and_timm_models(qtbot, window):
    combo = window.model_combo
    combo.activated.emit(combo.findText("torchvision and timm models…"))
    qtbot.waitUntil(lambda: combo.findText("timm:vit_tiny_patch16_224") >= 0, timeout=60_000)  # filled on the GUI thread
    names = {combo.itemText(i) for i in range(combo.count())}
    assert {"resnet18", "vit_b_16", "deeplabv3_resnet50", "timm:vit_tiny_patch16_224", "timm:convnext_tiny"} <= names
    assert combo.currentText() == window.state.model.source  # still shows what is loaded
    combo.hidePopup()


def test_a_segmentation_is_drawn_over_the_input_and_a_dragged_box_sets_the_target(ui, qtbot, open_window,
                                                                                    gui_files, image_file):
    """Issue 12 in the app: the predicted classes over the input with a legend; a box dragged on the
    input makes the target that class over the box."""
    window = open_window(ui.source(gui_files, "TinySeg"), image_file, {"conv"})
    assert window.state.model.task == "segmentation"
    assert [window.target_combo.itemData(i) for i in range(window.target_combo.count())][:2] == ["auto", "seg:0"]
    first = window.state.outcome
    assert first.result.target.startswith("seg:")  # auto: the class with most pixels
    caption = window.input_view.caption.text()
    assert "drag a box" in caption and any(name in caption for name in ("background", "cat", "dog"))
    window.target_combo.set_target("seg:2")
    window.state.set_target("seg:2")
    ui.expect_result(qtbot, window)
    window.input_view.sigBoxDragged.emit(0.25, 0.5, 0.75, 1.0)  # rows 8..24, columns 16..32 of 32 x 32
    boxed = ui.expect_result(qtbot, window)
    assert window.state.target == "seg:2@16,8,32,24" and boxed.result.target == "seg:2@16,8,32,24"
    logits = boxed.result.output  # (1, 3, 32, 32): the objective is class 2's logits over the box
    assert boxed.result.objective == pytest.approx(float(logits[0, 2, 8:24, 16:32].astype(np.float64).sum()),
                                                   rel=1e-5)


def test_the_token_grid_can_be_overridden(ui, qtbot, open_window, gui_files, image_file, monkeypatch):
    """Issue 12: the grid comes from the model; the user can override it (View > Token grid…)."""
    from PySide6.QtWidgets import QInputDialog

    from inspector.core.records.tokens import TokenGrid

    window = open_window(ui.source(gui_files, "TinyViT"), image_file, {"attn", "head"})
    window.layer_combo.setCurrentIndex(window.layer_combo.findData("attn"))
    assert window.activation_panel.mosaic.tile_h == 4  # the model's 4 x 4 grid after one class token
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("2x8+1", True)))
    window.ask_token_grid()
    assert window.activation_panel.tokens == TokenGrid(2, 8, 1)
    assert (window.activation_panel.mosaic.tile_h, window.activation_panel.mosaic.tile_w) == (2, 8)
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("2 by 8", True)))
    window.ask_token_grid()
    assert "Not a token grid" in window.banner.text() and window.activation_panel.tokens == TokenGrid(2, 8, 1)


def test_after_a_failed_weights_load_the_chooser_shows_the_weights_still_loaded(ui, qtbot, open_window, monkeypatch,
                                                                                tmp_path, gui_files, image_file):
    """Issue 25, item 4: the chooser kept the failed choice while the banner said 'still on ... (random)'."""
    from PySide6.QtWidgets import QFileDialog

    window = open_window(ui.source(gui_files, "Unseeded"), image_file, {"conv", "fc"})
    combo, seed = window.weights_combo, window.state.model.seed
    shown = combo.currentText()
    assert shown == f"random (seed {seed})"
    bad = tmp_path / "broken.safetensors"
    bad.write_bytes(b"not a safetensors file")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(bad), "")))
    i = next(i for i in range(combo.count()) if tuple(combo.itemData(i)) == ("checkpoint", None))
    combo.setCurrentIndex(i)  # what a click on the item does before `activated`
    with qtbot.waitSignal(window.state.sigFailed, timeout=20_000):
        combo.activated.emit(i)
    assert "Still on" in window.banner.text() and window.state.model.seed == seed
    assert combo.currentText() == shown and tuple(combo.currentData()) == ("random", seed)


def test_an_output_channel_is_not_followed_on_a_grad_input_panel(ui, qtbot, window):
    """Issue 41, item 7: grad_input is the gradient at the module's input, another tensor than its output, even
    where the shapes agree: a click on output channel 2 leaves it alone and says so; a cursor is not read out
    there either; grad_output is followed again."""
    act, grad = window.activation_panel, window.gradient_panel
    window.state.select_grad_site("grad_input")
    qtbot.waitUntil(lambda: grad.key == "features.0:grad_input", timeout=60_000)  # after a run for the site
    before = grad.channel
    act.sigChannelZoomed.emit(2)
    assert grad.channel == before != 2
    assert grad.hover.text() == "Not linked: features.0:grad_input is another tensor than features.0:output."
    act.sigCursor.emit((1, 0, 0, tuple(act.maps.shape)))
    assert not grad.hover.text().endswith("(the other side's cursor)")
    window.state.select_grad_site("grad_output")
    qtbot.waitUntil(lambda: grad.key == "features.0:grad_output", timeout=60_000)
    act.sigChannelZoomed.emit(2)
    assert grad.channel == 2
