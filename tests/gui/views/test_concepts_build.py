"""Issue 43 item 3: Build concepts in the app. The dialog (from the Atlas dock's Build concepts…) learns K=4 concepts
of the demo's relu3 over a few generated shapes in the worker, to the end, and the Concepts dock opens them; Cancel
stops a build (its state kept: building again goes on and finishes); NMF on a signed layer is refused as the
atlas's errors are (the banner, and one line in the dock)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PySide6.QtWidgets import QDialog, QPushButton

from inspector.core.concepts import load_dictionary
from inspector.demo.shapes import render
from inspector.gui.views.concepts.build import BuildConceptsDialog


@pytest.fixture(scope="module")
def shapes(tmp_path_factory):
    data = tmp_path_factory.mktemp("concepts_build") / "data"
    data.mkdir()
    rng = np.random.default_rng(1)
    for i in range(8):
        render(i, rng).save(data / f"{i:02d}.png")
    return data


def fill_and_accept(data, layer, k, method, out):
    """Stands in for QDialog.exec: the user fills the dialog in and presses Build."""

    def exec_(dialog):
        dialog.data.setText(str(data))
        dialog.layer.setCurrentText(layer)
        dialog.k.setValue(k)
        dialog.method.setCurrentIndex(dialog.method.findData(method))
        dialog.out.setText(str(out))
        dialog.buttons.accepted.emit()
        return dialog.result()

    return exec_


def test_the_dialog_builds_to_the_end_and_the_dock_opens_it(qtbot, open_window, shapes, tmp_path, monkeypatch):
    window = open_window("demo", "sample:star")
    window.state.select_layer("relu3")
    seen = {}

    def exec_(dialog):
        seen["layer"] = dialog.layer.currentText()  # the selected layer, offered first
        return fill_and_accept(shapes, "relu3", 4, "nmf", tmp_path / "c")(dialog)

    monkeypatch.setattr(BuildConceptsDialog, "exec", exec_)
    button = next(b for b in window.views.atlas.findChildren(QPushButton) if b.text() == "Build concepts…")
    button.click()
    view = window.concepts.view
    assert seen["layer"] == "relu3" and window.concepts.state.building and view.cancel_button.isVisible()
    qtbot.waitUntil(lambda: view.opened is not None, timeout=60_000)
    assert not view.cancel_button.isVisible() and view.build_button.isEnabled()
    d = load_dictionary(tmp_path / "c")
    assert (view.opened.folder, view.opened.layer, view.opened.k, view.opened.method) == (str(tmp_path / "c"),
                                                                                         "relu3", 4, "nmf")
    assert d.k == 4 and d.layer == "relu3" and d.model == "demo"
    record = json.loads((tmp_path / "c" / "concepts.json").read_text())
    assert len(record["data"]["files"]) == 8 and record["data"]["root"] == str(shapes)
    qtbot.waitUntil(lambda: view.reading is not None, timeout=30_000)
    assert view.coefficients.heights().shape == (4,)


def test_cancel_or_esc_stops_the_build_and_building_again_finishes_it(qtbot, open_window, shapes, tmp_path):
    window = open_window("demo", "sample:star")
    controller, view = window.concepts, window.concepts.view
    out = tmp_path / "c"
    assert controller.build(str(shapes), "relu3", 4, "sae", 2, str(out))
    view.cancel_button.click()  # stops after the first batch
    qtbot.waitUntil(lambda: not controller.state.building, timeout=60_000)
    assert "cancelled" in view.message.text() and "Build again" in view.message.text()
    assert view.opened is None and not (out / "dictionary.safetensors").exists()
    assert (out / "concepts.partial.json").is_file()  # the state a second build goes on from
    assert controller.build(str(shapes), "relu3", 4, "sae", 2, str(out))
    qtbot.waitUntil(window.cancel_action.isEnabled, timeout=20_000)  # the worker is busy with it: Esc stops it
    window.cancel_action.trigger()
    qtbot.waitUntil(lambda: not controller.state.building, timeout=60_000)
    assert "cancelled" in view.message.text() and view.opened is None
    assert controller.build(str(shapes), "relu3", 4, "sae", 2, str(out))
    qtbot.waitUntil(lambda: view.opened is not None, timeout=60_000)
    assert load_dictionary(out).method == "sae" and not (out / "concepts.partial.json").exists()


def test_nmf_on_a_signed_layer_is_refused_in_one_line(qtbot, open_window, shapes, tmp_path):
    window = open_window("demo", "sample:star")
    controller, view = window.concepts, window.concepts.view
    shown = []
    window.state.sigNotice.connect(shown.append)
    controller.build(str(shapes), "conv3", 4, "nmf", None, str(tmp_path / "c"))
    qtbot.waitUntil(lambda: not controller.state.building, timeout=60_000)
    said = view.message.text()  # the app's words: no command-line flag
    assert "Not built" in said and "learn them with the sparse autoencoder (method sae)." in said and "--" not in said
    error = [n for n in shown if n.level == "error"]
    assert error and error[-1].text.startswith("Concepts not built: ") and "\n" not in error[-1].text
    assert view.opened is None and not (tmp_path / "c" / "dictionary.safetensors").exists()


def test_the_dialog_says_what_is_missing(qtbot, tmp_path):
    dialog = BuildConceptsDialog(["conv1", "relu3"], "relu3")
    qtbot.addWidget(dialog)
    assert dialog.layer.currentText() == "relu3" and dialog.k.value() == 16 and dialog.method.currentData() == "nmf"
    dialog.data.setText("")
    dialog.buttons.accepted.emit()
    assert dialog.result() != QDialog.Accepted and dialog.why.text() == "Choose the folder of images to learn from."
    dialog.data.setText(str(tmp_path / "nowhere"))
    dialog.buttons.accepted.emit()
    assert dialog.why.text() == f"{tmp_path / 'nowhere'} is not a folder."
    dialog.data.setText(str(tmp_path))
    dialog.layer.setCurrentText("fc9")
    dialog.buttons.accepted.emit()
    assert dialog.why.text() == "The model has no layer fc9."
    dialog.layer.setCurrentText("relu3")
    dialog.out.setText(str(tmp_path / "out"))
    dialog.buttons.accepted.emit()
    assert dialog.result() == QDialog.Accepted and dialog.choices() == (str(tmp_path), "relu3", 16, "nmf", None,
                                                                         str(tmp_path / "out"))
    assert not dialog.sparsity.isEnabled()
    dialog.method.setCurrentIndex(dialog.method.findData("sae"))
    dialog.k.setValue(3)
    dialog.buttons.accepted.emit()
    assert dialog.sparsity.isEnabled() and dialog.why.text() == "At most K (3) concepts can be active per position, not 4."
    dialog.sparsity.setValue(2)
    assert dialog.choices()[3:5] == ("sae", 2)


def test_the_builds_progress_says_the_rate_and_time_left_of_each_stage(monkeypatch):
    from inspector.gui.common import progress_rate
    from inspector.gui.worker.concepts import build_progress

    now = [0.0]
    monkeypatch.setattr(progress_rate.time, "perf_counter", lambda: now[0])  # the clock, moved by hand below
    said, told = [], []
    progress = build_progress(said.append, lambda done, total: told.append((done, total)))
    for t, stage, done, total in ((0.0, "pass", 0, 8), (2.0, "pass", 4, 8), (3.0, "fit", 1, 10), (4.0, "fit", 3, 10)):
        now[0] = t
        progress(stage, done, total)
    # 4 images in 2 s: 2/s, 4 left: 2 s; a new stage counts from its first report (a resumed build: this run's
    # work only): 2 batches in 1 s: 2/s, 7 left. No rate at a stage's first report (nothing counted yet)
    assert said == ["Concepts: the layer over the images: 0 of 8 images (Esc cancels)",
                    "Concepts: the layer over the images: 4 of 8 images (2.0/s, 2 s left; Esc cancels)",
                    "Concepts: fitting: 1 of 10 batches (Esc cancels)",
                    "Concepts: fitting: 3 of 10 batches (2.0/s, 4 s left; Esc cancels)"]
    assert told == [(0, 8), (4, 8), (1, 10), (3, 10)]


def test_the_default_pair_is_one_the_fit_accepts(qtbot, open_window, shapes, tmp_path, monkeypatch):
    """Issue 52 item 7: the dialog opened on the demo's conv3 (a convolution: -2.36 on the star) chose NMF, and the
    build failed once it read the folder. Its default pair is now sae there, NMF greyed with the reason; a ReLU gets
    NMF; a layer the run did not capture gets sae, and the dialog says why. The fit takes each default pair (one
    epoch here), and refuses NMF where it was greyed."""
    from inspector.core.concepts import learn_concepts
    from inspector.core.concepts.dictionary import ConceptError
    from inspector.core.sources.loader import load_model

    window = open_window("demo", "sample:star", {"conv3", "relu3", "fc"})
    window.state.select_layer("conv3")
    seen = {}

    def exec_(dialog):
        nmf = dialog.method.model().item(dialog.method.findData("nmf"))
        for layer in ("conv3", "relu3", "bn1"):
            dialog.layer.setCurrentText(layer)
            seen[layer] = (dialog.choices()[3], nmf.isEnabled(), dialog.method_note.text())
        return QDialog.Rejected

    monkeypatch.setattr(BuildConceptsDialog, "exec", exec_)
    window.concepts.build_dialog()
    low = window.outcome.result.captures["conv3:output"].stats.min
    assert low < 0
    assert seen["conv3"] == ("sae", False, f"conv3's output goes down to {low:.3g} in the last run: NMF needs a "
                                           f"non-negative layer (after a ReLU); sae takes any layer.")
    assert seen["relu3"][:2] == ("sae", True)  # the user's layer changed, the method kept (it works there too)
    assert seen["bn1"][:2] == ("sae", True) and "not captured in the last run" in seen["bn1"][2]
    loaded = load_model("demo")
    for layer, method in (("conv3", "sae"), ("relu3", "nmf")):
        dialog = BuildConceptsDialog(["conv3", "relu3"], layer, None, window.concepts.layer_sign)
        qtbot.addWidget(dialog)
        _data, _layer, k, chosen, sparsity, _out = dialog.choices()
        assert chosen == method
        record = learn_concepts(loaded, shapes, layer, tmp_path / layer, method=chosen, k=k, sparsity=sparsity,
                                epochs=1, pictures=False)
        assert record["layer"] == layer
    with pytest.raises(ConceptError, match="negative values"):
        learn_concepts(loaded, shapes, "conv3", tmp_path / "nmf", method="nmf", k=16, epochs=1, pictures=False)


def test_a_build_queued_behind_a_run_says_so(qtbot, ui, open_window, slow_source, image_file, shapes, tmp_path):
    """Issue 52 item 7: a build asked while the worker runs (the Slow model: 0.8 s a run) said "Starting…" until the
    run ended. It says what it waits for, then its own stages."""
    window = open_window(slow_source, image_file, ui.SLOW_TICKS)
    controller, view = window.concepts, window.concepts.view
    window.state.run()
    qtbot.waitUntil(lambda: window.state.phase.startswith("Running"), timeout=10_000)
    stages = []
    controller.state.sigBuildText.connect(stages.append)
    assert controller.build(str(shapes), "conv", 2, "sae", 1, str(tmp_path / "c"))
    assert view.progress_text.text() == f"Queued behind “{window.state.phase}”: the build starts when that ends."
    qtbot.waitUntil(lambda: view.opened is not None, timeout=60_000)
    queued = [t for t in stages if t.startswith("Queued behind “Running")]
    assert queued and stages.index(queued[-1]) < min(i for i, t in enumerate(stages) if t.startswith("Concepts: "))
