"""Issue 26 in the app: every method with its own options, the baseline shown beside the map with what it
is, deletion and insertion curves under it, progress said in the status bar, and Esc cancels."""

from __future__ import annotations

import numpy as np
import torch

from inspector.core import load_input, load_model
from inspector.core.attribution import attribute
from inspector.core.attribution.scores.baselines import make_baseline
from inspector.core.attribution.scores.faithfulness import faithfulness


def test_occlusion_with_a_white_baseline_and_scores_as_the_api_makes_them(qtbot, window, tiny_source, image_file):
    view = window.views.attribution
    window.tabs.setCurrentWidget(view)
    view.method.setCurrentText("occlusion")
    options = view.options.widgets
    options["window"].setValue(8)
    options["stride"].setValue(4)
    options["baseline"].setCurrentText("white")
    view.scores.setChecked(True)
    phases = []
    window.worker.sigPhase.connect(phases.append)
    with qtbot.waitSignal(window.state.analysis.sigAttribution, timeout=60_000):
        view.compute.click()
    model = load_model(tiny_source)
    x = load_input(image_file, model.preprocess, model.input_shape)
    white = make_baseline("white", x, model.preprocess).tensor
    found = attribute(model, x, "occlusion", window.state.outcome.result.target_index,
                      options={"window": 8, "stride": 4, "baseline": white})
    np.testing.assert_allclose(view.map, found.map, rtol=1e-5, atol=1e-7)
    assert view.baseline_box.isVisible() and view.baseline_text.text().startswith("white: pixels 1")
    assert not view.baseline_picture.pixmap().isNull()
    curves = faithfulness(model, x, found.map, found.target_index, white)
    assert view.curves.isVisible() and set(view.curves.lines) == {"deletion", "insertion"}
    for metric, line in view.curves.lines.items():
        xs, ys = line.getData()
        np.testing.assert_allclose(ys, curves[metric].scores, rtol=1e-5, atol=1e-7)
        assert xs[0] == 0.0 and xs[-1] == 1.0 and len(xs) == 51
        assert f"{metric} AUC {curves[metric].auc:.3f} (protocol inspector)" in view.caption.text()  # said with it
    assert "windows of 8 pixels, stride 4" in view.caption.text()
    said = [p for p in phases if p.startswith("Attribution (occlusion): ")]
    assert said and "steps" in said[-1] and "Esc cancels" in said[-1]


def _scored_saliency_against_black(qtbot, window):
    """The Attribution tab on screen, saliency scored against the black baseline computed; the tab."""
    view = window.views.attribution
    window.tabs.setCurrentWidget(view)
    view.method.setCurrentText("saliency")
    view.options.widgets["baseline"].setCurrentText("black")
    view.scores.setChecked(True)
    with qtbot.waitSignal(window.state.analysis.sigAttribution, timeout=60_000):
        view.compute.click()
    return view


def test_a_saliency_map_scored_shows_the_baseline_its_scores_took(qtbot, window, tiny_source, image_file):
    """Saliency has no baseline of its own: scored against "black", that picture is shown beside the map, titled
    as the scores' (the app named it nowhere before), and the curves are the ones that baseline gives."""
    view = _scored_saliency_against_black(qtbot, window)
    assert view.baseline_box.isVisible() and view.baseline_title.text() == "<b>Scores' baseline</b>"
    assert view.baseline_text.text().startswith("black") and not view.baseline_picture.pixmap().isNull()
    model = load_model(tiny_source)
    x = load_input(image_file, model.preprocess, model.input_shape)
    black = make_baseline("black", x, model.preprocess).tensor
    index = window.state.outcome.result.target_index
    curves = faithfulness(model, x, attribute(model, x, "saliency", index).map, index, black)
    _xs, ys = view.curves.lines["deletion"].getData()
    np.testing.assert_allclose(ys, curves["deletion"].scores, rtol=1e-5, atol=1e-7)


def test_smoothgrad_of_ig_offers_and_sends_igs_options(window):
    """Issue 39: SmoothGrad of ig showed no steps or quadrature, and its IG ran at the defaults unseen."""
    view = window.views.attribution
    shown = lambda: {n for n, w in view.options.widgets.items() if not w.isHidden()}  # noqa: E731
    view.method.setCurrentText("smoothgrad")
    view.options.widgets["of"].setCurrentText("ig")
    assert shown() == {"of", "kind", "samples", "noise", "seed", "steps", "quadrature", "baseline"}
    view.options.widgets["steps"].setValue(12)
    view.options.widgets["quadrature"].setCurrentText("riemann_trapezoid")
    assert view.options.values("smoothgrad") == {
        "of": "ig", "kind": "smoothgrad", "samples": 25, "noise": 0.15, "seed": None, "steps": 12,
        "quadrature": "riemann_trapezoid", "baseline": "zero", "metrics": ()}
    assert view.sign.itemText(0) == "signed (default)"  # the mean of a signed map is signed
    view.options.widgets["of"].setCurrentText("saliency")
    assert shown() == {"of", "kind", "samples", "noise", "seed"} and view.sign.itemText(0) == "positive (default)"


def test_only_the_methods_own_options_are_shown(window):
    view = window.views.attribution
    shown = lambda: {n for n, w in view.options.widgets.items() if not w.isHidden()}  # noqa: E731
    view.method.setCurrentText("gradcam")
    assert shown() == set()
    view.method.setCurrentText("ig")
    assert shown() == {"steps", "quadrature", "baseline"}
    view.method.setCurrentText("smoothgrad")
    assert shown() == {"of", "kind", "samples", "noise", "seed"}
    view.method.setCurrentText("occlusion")
    assert shown() == {"window", "stride", "baseline"}
    view.method.setCurrentText("saliency")
    assert shown() == set()
    view.scores.setChecked(True)  # the scores need a baseline whatever the method
    assert shown() == {"baseline"}
    assert view.options.values("saliency") == {"baseline": "zero", "metrics": ("deletion", "insertion")}
    view.method.setCurrentText("smoothgrad")
    view.options.widgets["seed"].setValue(7)
    assert view.options.values("smoothgrad") == {"of": "saliency", "kind": "smoothgrad", "samples": 25, "noise": 0.15,
                                                 "seed": 7, "baseline": "zero", "metrics": ("deletion", "insertion")}


def _cancelled_at_its_first_progress(qtbot, window, method: str, option: str, value: int) -> str:
    """`method` with `option` at `value` (long enough to be stopped), cancelled as Esc does when it first says
    its progress; the failure the tab was told."""
    view = window.views.attribution
    window.tabs.setCurrentWidget(view)
    view.method.setCurrentText(method)
    view.options.widgets[option].setValue(value)
    first = []

    def cancel_once(text):  # on the worker's thread, as its first progress is said: Esc's cancel, thread-safe
        if text.startswith(f"Attribution ({method}): ") and not first:
            first.append(text)
            window.worker.cancel()

    window.worker.sigPhase.connect(cancel_once)
    try:
        with qtbot.waitSignal(window.state.analysis.sigAttributionFailed, timeout=60_000) as failed:
            view.compute.click()
    finally:
        window.worker.sigPhase.disconnect(cancel_once)
    return failed.args[0]


def test_esc_cancels_a_long_integrated_gradients(qtbot, window):
    view = window.views.attribution
    said = _cancelled_at_its_first_progress(qtbot, window, "ig", "steps", 5000)  # ~300 passes of 16 points
    assert "cancelled" in said and view.map is None and "cancelled" in view.caption.text()
    assert torch.is_grad_enabled()


def test_compare_methods_side_by_side_scored_timed_and_exported(qtbot, window, tiny_source, image_file, tmp_path,
                                                                  monkeypatch):
    """Issue 26: 'Compare methods' computes every method for the same input and class, one after another,
    each scored with deletion and insertion and timed; Export writes the maps, the numbers and the picture."""
    import json

    from inspector.gui.common import file_dialogs

    view = window.views.attribution
    window.tabs.setCurrentWidget(view)
    view.compare.click()
    comparison = view.comparison
    qtbot.waitUntil(lambda: not view.comparing, timeout=120_000)
    assert set(comparison.found) == set(comparison.methods) and not comparison.failed
    model = load_model(tiny_source)
    x = load_input(image_file, model.preprocess, model.input_shape)
    index = window.state.outcome.result.target_index
    for method in ("saliency", "gradcam", "guided", "ig", "occlusion"):
        found = comparison.found[method]
        np.testing.assert_allclose(found.map, attribute(model, x, method, index).map, rtol=1e-4, atol=1e-6)
        assert found.target_index == index and dict(found.details)["seconds"] > 0
        aucs = {c.metric: c.auc for c in found.curves}
        zero = None if found.baseline is not None else torch.zeros_like(x)
        again = faithfulness(model, x, found.map, index, zero if zero is not None else torch.as_tensor(found.baseline)[None])
        assert aucs == {m: again[m].auc for m in ("deletion", "insertion")}
        assert comparison.titles[method].text.startswith(f"{method} · {found.shown_sign} · del {aucs['deletion']:.3f} · ins ")
    assert "steps 50, quadrature gausslegendre" in comparison.titles["ig"].text  # how each cell's map was made
    assert view.export.isEnabled()
    monkeypatch.setattr(file_dialogs, "save_file", lambda *_a, **_k: str(tmp_path / "cmp.json"))
    view.export.click()
    saved = np.load(tmp_path / "cmp.npz")
    assert sorted(saved.files) == sorted(comparison.methods)
    np.testing.assert_array_equal(saved["occlusion"], comparison.found["occlusion"].map)
    report = json.loads((tmp_path / "cmp.json").read_text())
    assert set(report["methods"]) == set(comparison.methods)
    assert report["methods"]["ig"]["settings"]["steps"] == 50 and "deletion" in report["methods"]["ig"]["metrics"]
    assert report["about"]["model"] == tiny_source and report["about"]["input"] == image_file  # what the maps are of
    assert report["methods"]["ig"]["sign"] == "signed" and report["methods"]["ig"]["method"] == "ig"
    assert (tmp_path / "cmp.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Saved cmp.npz, cmp.json, cmp.png." in comparison.status.text()


def test_a_baseline_file_chosen_in_the_app(qtbot, window, tiny_source, image_file, tmp_path, monkeypatch):
    """Issue 26: the baseline chooser's "file…" opens a file; the file (a tensor of the input's size here) is
    the baseline integrated gradients start from, shown beside the map; a cancelled dialog keeps the choice."""
    model = load_model(tiny_source)
    x = load_input(image_file, model.preprocess, model.input_shape)
    grey = np.full(tuple(x.shape), 0.25, np.float32)
    np.save(tmp_path / "grey.npy", grey)
    view = window.views.attribution
    window.tabs.setCurrentWidget(view)
    view.method.setCurrentText("ig")
    box = view.options.widgets["baseline"]
    box.setCurrentText("black")
    view.options._on_baseline(box.currentIndex())
    monkeypatch.setattr(view.options, "choose_file", lambda: "")
    view.options._on_baseline(box.findText("file…"))  # cancelled: still black
    assert box.currentText() == "black"
    monkeypatch.setattr(view.options, "choose_file", lambda: str(tmp_path / "grey.npy"))
    view.options._on_baseline(box.findText("file…"))
    assert box.currentText() == "grey.npy" and view.options.values("ig")["baseline"] == str(tmp_path / "grey.npy")
    with qtbot.waitSignal(window.state.analysis.sigAttribution, timeout=60_000):
        view.compute.click()
    index = window.state.outcome.result.target_index
    found = attribute(model, x, "ig", index, options={"baseline": torch.from_numpy(grey)})
    np.testing.assert_allclose(view.map, found.map, rtol=1e-5, atol=1e-7)
    assert view.baseline_text.text() == f"file: {tmp_path / 'grey.npy'}" and view.baseline_box.isVisible()


def test_a_session_keeps_the_attribution_choice_and_brings_it_back(qtbot, window, ui, tmp_path):
    """Issue 26: the method, class, options and scores asked for last are saved with the session (not a
    step of Compare all) and shown again when it is loaded; nothing computes until asked."""
    from inspector.core.session.file import load_session, save_session
    from inspector.gui.state.sessions import apply_session, session_of

    view = window.views.attribution
    window.tabs.setCurrentWidget(view)
    view.method.setCurrentText("occlusion")
    view.options.widgets["window"].setValue(8)
    view.options.widgets["baseline"].setCurrentText("white")
    view.scores.setChecked(True)
    with qtbot.waitSignal(window.state.analysis.sigAttribution, timeout=60_000):
        view.compute.click()
    saved = session_of(window.state).attribution
    stored = saved.pop("stored")  # the map made for it (the next test)
    assert saved == {"method": "occlusion", "target": "", "layer": None,
                     "options": {"window": 8, "baseline": "white"}, "metrics": ["deletion", "insertion"]}
    assert stored["method"] == "occlusion"
    view.compare.click()
    qtbot.waitUntil(lambda: not view.comparing, timeout=120_000)
    assert session_of(window.state).attribution == {**saved, "stored": stored}  # the comparison's steps are not
    session = session_of(window.state)
    path = save_session(session.__class__(**{**session.__dict__, "attribution": {
        "method": "ig", "target": "1", "layer": None, "options": {"steps": 12, "baseline": "black"},
        "metrics": ["deletion", "insertion"]}}), tmp_path / "s.inspector.json")
    view.method.setCurrentText("saliency")
    view.scores.setChecked(False)
    apply_session(window.state, load_session(path, trust=True), trust=True)
    ui.expect_result(qtbot, window)
    assert view.method.currentText() == "ig" and view.scores.isChecked()
    assert view.options.widgets["steps"].value() == 12 and view.options.widgets["baseline"].currentText() == "black"
    qtbot.waitUntil(lambda: view.target.currentData() == "1", timeout=10_000)


def test_a_session_keeps_the_map_and_opens_with_it_without_computing(qtbot, window, ui, tmp_path):
    """Issue 26: the map made for the choice is kept in the session file (arrays inside its JSON, written whole)
    and shown again, with its curves and the scores' baseline, with the session model's first result, no
    attribution asked of the worker; saved again, it is kept again."""
    from inspector.gui.state.sessions import session_of

    view = _scored_saliency_against_black(qtbot, window)
    made, curves = view.map.copy(), {m: line.getData()[1].copy() for m, line in view.curves.lines.items()}
    path = tmp_path / "kept.inspector.json"
    window.edits.save(str(path))
    view.method.setCurrentText("gradcam")
    with qtbot.waitSignal(window.state.analysis.sigAttribution, timeout=60_000):
        view.compute.click()
    assert not np.array_equal(view.map, made)
    asked = window.state.analysis.pending_id
    assert window.edits.load(str(path), trust=True)
    ui.expect_result(qtbot, window)
    qtbot.waitUntil(lambda: "kept in the session" in view.caption.text(), timeout=10_000)
    np.testing.assert_array_equal(view.map, made)
    assert window.state.analysis.pending_id == asked  # nothing was computed
    assert view.method.currentText() == "saliency" and view.caption.text().startswith("saliency for class ")
    for metric, ys in curves.items():
        np.testing.assert_array_equal(view.curves.lines[metric].getData()[1], ys)
    assert view.baseline_box.isVisible() and view.baseline_text.text().startswith("black")
    kept = session_of(window.state).attribution["stored"]
    import json

    assert kept["map"] == json.loads(path.read_text())["attribution"]["stored"]["map"]


def test_another_model_stops_a_comparison_and_drops_a_map_still_coming(qtbot, window, ui, gui_files):
    """Issue 25's rule for issue 26's views: nothing made for the last model is shown for the next one."""
    from inspector.core.attribution import Attribution
    from inspector.core.records.requests import ModelRequest

    view = window.views.attribution
    view.comparison.start(("saliency", "gradcam"), None)
    view.comparing = True
    old = window.state.analysis.pending_id = -41  # a map being made for Tiny
    shown = []
    window.state.analysis.sigAttribution.connect(shown.append)
    window.state.request_model(ModelRequest(ui.source(gui_files, "Wide"), trust=True))
    ui.expect_result(qtbot, window)
    assert not view.comparing and view.comparison.methods == () and not view.export.isEnabled()
    assert "Another model" in view.comparison.status.text()
    window.state.analysis._on_attribution(old, Attribution("saliency", np.zeros((32, 32)), "top1", 0))
    assert shown == []


def test_esc_cancels_a_long_smoothgrad_and_ends_its_noise_thread(qtbot, window):
    """SmoothGrad draws its noise on a thread of its own: a cancelled run ends it, and the next run is whole."""
    import threading

    view = window.views.attribution
    said = _cancelled_at_its_first_progress(qtbot, window, "smoothgrad", "samples", 3000)  # hundreds of passes
    assert "cancelled" in said and view.map is None
    qtbot.waitUntil(lambda: not any(t.name == "smoothgrad-noise" for t in threading.enumerate()), timeout=5_000)
    view.options.widgets["samples"].setValue(4)
    with qtbot.waitSignal(window.state.analysis.sigAttribution, timeout=60_000):
        view.compute.click()
    assert view.map is not None and np.isfinite(view.map).all()


def test_compare_all_stops_on_the_cancelled_flag_not_on_the_words(qtbot, window):
    """Issue 39: the state runs Compare all's queue; a cell that failed goes on to the next one even when its
    message says "cancelled", and a cancelled one (the failure's flag) stops the rest whatever its words."""
    from inspector.core.records.failure import Failure

    view, analysis = window.views.attribution, window.state.analysis
    asked = []
    analysis.worker.request_attribution = asked.append  # the requests, kept here: the test answers them
    view.compare_methods(("saliency", "gradcam", "guided"))
    assert view.comparing and analysis.comparing and [r.method for r in asked] == ["saliency"]
    analysis.failed(Failure("the model's own code said: cancelled too early", "attribution", "RunError",
                            asked[-1].run_id))
    assert [r.method for r in asked] == ["saliency", "gradcam"] and view.comparing  # went on
    assert "cancelled too early" in view.comparison.titles["saliency"].text
    analysis.failed(Failure("Stopped.", "attribution", "RunCancelled", asked[-1].run_id, cancelled=True))
    assert [r.method for r in asked] == ["saliency", "gradcam"]  # nothing more asked for
    assert not view.comparing and not analysis.comparing
    assert view.comparison.status.text() == "Stopped: Stopped."
    assert set(view.comparison.failed) == {"saliency", "gradcam"} and "guided" not in view.comparison.found


def test_a_map_is_out_of_date_when_its_options_change_and_says_all_its_settings(qtbot, window):
    """Issue 39: changing steps, quadrature or the baseline left the old map under controls that no longer
    matched; SmoothGrad of ig showed no steps or quadrature; now the map is marked out of date until Compute, and
    the caption and settings say how it was made."""
    view = window.views.attribution
    window.tabs.setCurrentWidget(view)
    view.method.setCurrentText("smoothgrad")
    w = view.options.widgets
    w["of"].setCurrentText("ig")
    w["kind"].setCurrentText("vargrad")
    w["samples"].setValue(2)
    w["seed"].setValue(3)
    w["steps"].setValue(4)
    w["quadrature"].setCurrentText("riemann_trapezoid")
    with qtbot.waitSignal(window.state.analysis.sigAttribution, timeout=60_000):
        view.compute.click()
    found = window.state.analysis.found
    assert found.method == "vargrad" and found.settings["kind"] == "vargrad" and found.settings["of"] == "ig"
    assert found.settings["steps"] == 4 and found.settings["quadrature"] == "riemann_trapezoid"
    assert found.settings["baseline"] == "zero" and found.settings["sign"] == "positive"
    assert "vargrad of ig (4 steps, riemann_trapezoid): 2 noisy copies" in view.caption.text()
    assert not view.stale and "Out of date" not in view.caption.text()
    w["steps"].setValue(6)  # the map stays, marked
    assert view.stale and view.caption.text().count("Out of date") == 1 and view.map is not None
    assert view.heat.opacity() < view.opacity.value() / 100
    w["baseline"].setCurrentText("uniform")
    assert view.caption.text().count("Out of date") == 1  # said once
    with qtbot.waitSignal(window.state.analysis.sigAttribution, timeout=60_000):
        view.compute.click()
    assert not view.stale and "Out of date" not in view.caption.text()
    assert window.state.analysis.found.settings["steps"] == 6
    assert window.state.analysis.found.settings["baseline"] == "uniform"


def test_integrated_gradients_auto_steps_in_the_app(window):
    """Issue 39, item 9: "auto" under Steps offers the tolerance and the cap, and sends steps="auto"."""
    view = window.views.attribution
    shown = lambda: {n for n, w in view.options.widgets.items() if not w.isHidden()}  # noqa: E731
    view.method.setCurrentText("ig")
    steps = view.options.widgets["steps"]
    steps.setValue(steps.minimum())
    assert steps.text() == "auto" and shown() == {"steps", "quadrature", "tolerance", "max_steps", "baseline"}
    assert view.options.values("ig") == {"steps": "auto", "quadrature": "gausslegendre", "tolerance": 0.01,
                                         "max_steps": 512, "baseline": "zero", "metrics": ()}
    steps.setValue(20)
    assert shown() == {"steps", "quadrature", "baseline"}
    view.options.restore({"steps": "auto"})  # a session's
    assert steps.value() == steps.minimum()


def test_steps_auto_greys_the_quadrature_and_says_its_tolerance_in_the_gaps_units(qtbot, window):
    """Issue 52 item 7: with Steps on auto the Quadrature box stayed enabled (auto integrates by its own nested
    trapezoid), and the caption put the relative tolerance's effect nowhere beside the absolute gap. Now the
    Quadrature box and its label are greyed while steps is auto, and the caption says the gap steps auto stops at,
    tolerance × |f(x) - f(baseline)|, in the gap's own units. Labels read as words ("Max steps")."""
    view = window.views.attribution
    window.tabs.setCurrentWidget(view)
    view.method.setCurrentText("ig")
    options = view.options
    steps, quadrature = options.widgets["steps"], options.widgets["quadrature"]
    assert quadrature.isEnabled()
    steps.setValue(steps.minimum())
    assert not quadrature.isEnabled() and not options.labels["quadrature"].isEnabled()
    assert options.labels["max_steps"].text() == "Max steps"
    options.widgets["tolerance"].setValue(0.05)
    with qtbot.waitSignal(window.state.analysis.sigAttribution, timeout=60_000):
        view.compute.click()
    found = window.state.analysis.found
    made = dict(found.details)
    reach = 0.05 * abs(made["f(x) - f(baseline)"])
    assert f"steps auto stops at a gap of {reach:.3g} = tolerance 0.05 × |f(x) - f(baseline)|" in view.caption.text()
    assert found.completeness_gap <= reach or made["steps"] >= 512  # what it says it stopped at
    steps.setValue(16)
    assert quadrature.isEnabled() and options.labels["quadrature"].isEnabled()


def test_the_sign_chooser_lists_each_sign_once(window):
    """Issue 52 item 7: the Sign chooser listed "signed (default)" and "signed" for integrated gradients (the
    method's default first, then every sign). The default's own entry is not listed; another method's default is
    listed once too."""
    view = window.views.attribution
    listed = lambda: [view.sign.itemText(i) for i in range(view.sign.count())  # noqa: E731
                      if not view.sign.view().isRowHidden(i)]
    view.method.setCurrentText("ig")
    assert listed() == ["signed (default)", "positive", "negative", "absolute"]
    view.method.setCurrentText("saliency")
    assert listed() == ["positive (default)", "negative", "absolute", "signed"]
    view.sign.setCurrentIndex(view.sign.findData("signed"))  # chosen: kept for a method whose default it is not
    view.method.setCurrentText("gradcam")
    assert view.sign.currentData() == "signed"
