"""Issue 55 item 6, the app's part: Attribution > Evaluate… runs `run_evaluation` on the loaded model in the worker,
with progress, and the Evaluation window shows its summary. The table's rows are summary.json's (read_summary) and
equal a run of `run_evaluation` made here, by itself; the chart draws the chosen metric's means and intervals;
Cancel and Esc stop the job with its state kept, and evaluating again finishes it; a folder with no images is one
line in the banner, the summary on screen and the files in the output folder staying as they were."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image
from PySide6.QtGui import QAction

from inspector.core import load_model
from inspector.core.evaluate import read_summary, run_evaluation
from inspector.gui.views.evaluation.dialog import EvaluateDialog

METHODS, METRICS, STEPS = ("saliency", "gradcam"), ("deletion", "insertion"), 4


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("evaluate_app") / "data"
    root.mkdir()
    rng = np.random.default_rng(3)
    for i in range(4):
        Image.fromarray(rng.integers(0, 256, (40, 48, 3), dtype=np.uint8)).save(root / f"{i}.png")
    return root


@pytest.fixture(scope="module")
def direct(data, tmp_path_factory):
    """The same evaluation run by `run_evaluation` itself, in this process: the numbers the app must show."""
    out = tmp_path_factory.mktemp("direct")
    return run_evaluation(load_model("demo"), data, list(METHODS), list(METRICS), out, steps=STEPS)


def menu_action(window, text: str) -> QAction:
    return next(a for a in window.findChildren(QAction) if a.text() == text)


def same_numbers(rows, summary_rows) -> None:
    assert [(r["method"], r["metric"], r["number"], r["n"]) for r in rows] == \
        [(r["method"], r["metric"], r["number"], r["n"]) for r in summary_rows]
    for got, want in zip(rows, summary_rows):
        for field in ("mean", "ci_low", "ci_high", "std"):
            assert got[field] == pytest.approx(want[field], abs=1e-6), (got, field)


@pytest.mark.numeric
def test_evaluate_shows_the_summary_of_the_job(qtbot, open_window, data, direct, tmp_path, monkeypatch):
    window = open_window("demo", "sample:star")
    out = tmp_path / "out"
    said, counts = [], []

    def exec_(dialog):  # the user's choices, then Evaluate
        assert set(METHODS) <= set(dialog.methods) and set(METRICS) <= set(dialog.metrics)
        dialog.data.setText(str(data))
        dialog.out.setText(str(out))
        for name, box in {**dialog.methods, **dialog.metrics}.items():
            box.setChecked(name in METHODS + METRICS)
        dialog.protocol.setCurrentIndex(dialog.protocol.findData("inspector"))
        dialog.steps.setValue(STEPS)
        dialog.buttons.accepted.emit()
        return dialog.result()

    monkeypatch.setattr(EvaluateDialog, "exec", exec_)
    state = window.evaluation.state
    state.sigBuildText.connect(said.append)
    state.sigProgress.connect(lambda done, total: counts.append((done, total)))
    menu_action(window, "Evaluate…").trigger()
    view = window.evaluation.view
    assert state.building and view.isVisible() and view.cancel_button.isVisible()
    qtbot.waitUntil(lambda: state.shown is not None, timeout=60_000)
    assert not view.cancel_button.isVisible() and state.build_phase == "done"
    assert counts[-1] == (4, 4) and any(t.startswith("Evaluation: ") and "of 4 images" in t for t in said)
    on_disk = read_summary(out)
    assert view.shown_rows() == on_disk["summary"]  # the table is the files' summary, row for row
    same_numbers(view.shown_rows(), direct["summary"])  # ... and a run of the core's by itself
    first = view.table.item(0, 2).text(), view.table.item(0, 3).text(), view.table.item(0, 4).text()
    row = on_disk["summary"][0]
    assert first == (f"{row['mean']:.4f}", f"[{row['ci_low']:.4f}, {row['ci_high']:.4f}]", "4")
    assert [view.measure.itemText(i) for i in range(view.measure.count())] == ["deletion auc", "insertion auc"]
    view.measure.setCurrentText("insertion auc")  # the chart: a bar per method, the interval around its mean
    drawn = [r for r in direct["summary"] if r["metric"] == "insertion"]
    assert [name for name, *_ in view.chart.shown] == list(METHODS)
    np.testing.assert_allclose([v for _, *v in view.chart.shown],
                               [[r["mean"], r["ci_low"], r["ci_high"]] for r in drawn], atol=1e-6)
    np.testing.assert_allclose(view.chart.bars.opts["height"], [r["mean"] for r in drawn], atol=1e-6)
    np.testing.assert_allclose(view.chart.whiskers.opts["top"], [r["ci_high"] - r["mean"] for r in drawn],
                               atol=1e-6)
    view.close()


@pytest.mark.numeric
def test_cancel_or_esc_keeps_the_job_and_evaluating_again_finishes_it(qtbot, open_window, data, direct, tmp_path):
    window = open_window("demo", "sample:star")
    controller, out = window.evaluation, tmp_path / "out"
    state, view = controller.state, controller.view
    choices = (str(data), str(out), METHODS, METRICS, "inspector", STEPS)
    assert controller.run(*choices)
    view.cancel_button.click()  # the job stops after its first image
    qtbot.waitUntil(lambda: not state.building, timeout=60_000)
    assert state.build_phase == "cancelled" and "Evaluate again with the same choices" in view.message.text()
    assert (out / "evaluation.partial.json").is_file() and not (out / "summary.json").exists()
    assert state.shown is None and view.table.rowCount() == 0
    escaped = []

    def esc(done: int, _total: int) -> None:  # the resumed job's first count, said before its next image
        if not escaped:
            escaped.append(done)
            assert window.cancel_action.isEnabled()  # the worker is on it: Esc stops it
            window.cancel_action.trigger()

    state.sigProgress.connect(esc)
    assert controller.run(*choices)
    qtbot.waitUntil(lambda: not state.building, timeout=60_000)
    state.sigProgress.disconnect(esc)
    assert escaped and 1 <= escaped[0] < 4  # it went on from the images done before
    assert state.build_phase == "cancelled" and not (out / "summary.json").exists()
    assert controller.run(*choices)
    qtbot.waitUntil(lambda: state.shown is not None, timeout=60_000)
    assert not (out / "evaluation.partial.json").exists()
    assert view.shown_rows() == read_summary(out)["summary"]
    same_numbers(view.shown_rows(), direct["summary"])  # resumed, it gives the numbers of a job never stopped
    view.close()


def test_a_bad_folder_is_one_line_and_nothing_is_lost(qtbot, open_window, data, direct, tmp_path):
    window = open_window("demo", "sample:star")
    controller = window.evaluation
    state, view = controller.state, controller.view
    notices = []
    window.state.sigNotice.connect(notices.append)
    out = tmp_path / "out"
    assert controller.run(str(data), str(out), ("saliency",), ("deletion",), "inspector", 2)
    qtbot.waitUntil(lambda: state.shown is not None, timeout=60_000)
    files = {p.name: p.read_bytes() for p in out.iterdir()}
    shown = view.shown_rows()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert controller.run(str(empty), str(out), ("saliency",), ("deletion",), "inspector", 2)
    qtbot.waitUntil(lambda: not state.building, timeout=60_000)
    errors = [n.text for n in notices if n.level == "error"]
    assert len(errors) == 1 and errors[0].startswith("Not evaluated: ") and "\n" not in errors[0]
    assert str(empty) in errors[0] and view.message.text() == errors[0]
    assert state.build_phase == "failed" and view.shown_rows() == shown  # the summary on screen stays
    assert {p.name: p.read_bytes() for p in out.iterdir()} == files  # and so do its files
    assert not controller.open(str(empty))  # a folder with no summary.json: one line too
    assert notices[-1].level == "error" and notices[-1].text == f"{empty} holds no finished evaluation (no " \
                                                                "summary.json)."
    assert view.shown_rows() == shown
    assert controller.open(str(out)) and view.shown_rows() == read_summary(out)["summary"]
    view.close()
