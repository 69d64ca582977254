"""Check these maps and Evaluate… on a remote engine (issue 53's "every view against the server"), the window's side.

First the RemoteWorker alone against a fake connection: a trust card goes as the protocol's `checks`, an evaluation
as `evaluate`; their progress, results, failures and cancels reach the state as the in-process worker's signals do.
Then the window on a real `network-inspector serve` on 127.0.0.1 beside a window whose engine is in this process,
both on the demo model: Check these maps makes the same cards (every number, MPRT's curve and the randomisation
strip's maps) from the same seed; Evaluate… over a small folder made here writes the same CSV and JSON files there
as here, and shows the same summary; Cancel stops it on the engine, and evaluating again finishes it there."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import Qt
from test_remote_engine_window import WAIT_MS, _settings, engine_server, remote_window

from inspector.core.records.evaluation import EvaluationDone, EvaluationRequest
from inspector.core.records.failure import Failure
from inspector.core.records.requests import ModelRequest
from inspector.core.records.trust import TrustRequest
from inspector.protocol.messages import Message

# the same numbers need the same arithmetic: the server's one thread here too (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("threads_as_the_server")

SEED = 5
METHODS = ("saliency", "gradcam")
FILES = ("summary.json", "summary.csv", "values.json", "values.csv")


class Client:
    """What the RemoteWorker's thread sends, kept."""

    def __init__(self) -> None:
        self.sent = []

    def send(self, kind, body=None, key=None):
        self.sent.append((kind, body))
        return key or f"s{len(self.sent)}"


def test_the_checks_and_an_evaluation_cross_as_their_kinds_and_answer_as_in_process(qtbot):
    from inspector.gui.worker.remote import RemoteWorker

    worker, client = RemoteWorker("ws://127.0.0.1:1"), Client()
    got = {"answer": [], "failed": [], "phase": [], "evaluation": [], "progress": []}
    worker.sigAnswer.connect(lambda *a: got["answer"].append(a))
    worker.sigFailed.connect(got["failed"].append)
    worker.sigPhase.connect(got["phase"].append)
    worker.sigEvaluationAnswer.connect(lambda *a: got["evaluation"].append(a))
    worker.sigEvaluationProgress.connect(lambda *a: got["progress"].append(a))
    check = TrustRequest(ModelRequest("demo"), "sample:star", method="gradcam", run_id=-2, seed=SEED)
    worker.request_check(check)
    worker._send_waiting(client)
    assert client.sent == [("checks", check)]
    worker._on_event(Message("progress", "s1", {"done": 0, "total": 0, "rate": 0.0, "stage": "MPRT step 2 of 4"}))
    card = object()  # (a TrustCard, as it came)
    worker._on_event(Message("result", "s1", card))
    qtbot.waitUntil(lambda: bool(got["answer"]), timeout=5_000)
    assert got["answer"] == [("check", -2, card)]
    assert "Checking the maps (gradcam): MPRT step 2 of 4 (on the engine; Esc cancels)" in got["phase"]
    worker.request_check(check)  # one stopped on the engine: a cancelled Failure of the checks, as Esc's in process
    worker._send_waiting(client)
    worker._on_event(Message("cancelled", "s2", "Cancelled."))
    qtbot.waitUntil(lambda: bool(got["failed"]), timeout=5_000)
    failed = got["failed"][0]
    assert (failed.what, failed.run_id, failed.cancelled, failed.message) == ("checks", -2, True, "Cancelled.")

    asked = EvaluationRequest(ModelRequest("demo"), "images", "out", METHODS, ("deletion",), run_id=3)
    worker.request_evaluation(asked)
    worker._send_waiting(client)
    assert client.sent[-1] == ("evaluate", asked)
    for done in (0, 2, 4):
        worker._on_event(Message("progress", "s3", {"done": done, "total": 4, "rate": 1.0}))
    worker.cancel_evaluation()  # in flight: stopped on the engine
    assert worker._cancels == ["evaluate-3"]
    worker._send_cancels(client)
    assert client.sent[-1] == ("cancel", "s3")
    done = EvaluationDone("out", {"images": 4})
    worker._on_event(Message("result", "s3", done))
    qtbot.waitUntil(lambda: bool(got["evaluation"]), timeout=5_000)
    assert got["evaluation"] == [(3, done)] and got["progress"] == [(0, 4), (2, 4), (4, 4)]
    assert "Evaluation: 4 of 4 images (Esc cancels)" in got["phase"]
    worker.request_evaluation(asked)  # one still waiting: dropped, answered cancelled at once
    worker.cancel_evaluation()
    qtbot.waitUntil(lambda: len(got["evaluation"]) == 2, timeout=5_000)
    run_id, failed = got["evaluation"][1]
    assert run_id == 3 and isinstance(failed, Failure) and failed.cancelled and failed.what == "evaluation"
    assert worker._lanes.drop("evaluate") is None and not worker._flights


def _cards(qtbot, window):
    """Compare all's maps, then Check these maps under rise2018 from SEED: the trust panel and its cards."""
    view = window.views.attribution
    window.tabs.setCurrentWidget(view)
    view.compare_methods(METHODS)
    qtbot.waitUntil(lambda: not view.comparing, timeout=WAIT_MS)
    panel = view.comparison.trust
    assert set(view.comparison.found) == set(METHODS) and panel.check.isEnabled()
    panel.protocol.setCurrentText("rise2018")
    panel.seed.setValue(SEED)
    with qtbot.waitSignal(window.analysis.trust.trust.sigEnded, timeout=WAIT_MS) as ended:
        panel.check.click()
    assert ended.args == [""], ended.args
    return panel


def _timeless(value):
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k != "seconds"}
    return [_timeless(v) for v in value] if isinstance(value, list) else value


def test_the_trust_cards_on_a_remote_engine_are_the_local_ones(qtbot, ui, open_window, tmp_path):
    if not ui.has_demo():
        pytest.skip("the demo model's files are not installed")
    local = open_window(settings_=_settings(tmp_path / "local" / "inspector.ini"))
    here = _cards(qtbot, local)
    with engine_server(tmp_path / "server") as (_process, url, token_file):
        with remote_window(qtbot, ui, url, token_file, tmp_path / "remote") as window:
            phases = []
            window.worker.sigPhase.connect(phases.append)
            there = _cards(qtbot, window)
            assert set(there.cards) == set(here.cards) == set(METHODS)
            for method in METHODS:
                a, b = there.cards[method].card, here.cards[method].card
                assert _timeless(a.as_json()) == _timeless(b.as_json()), method  # every number, from seed 5
                assert a.seed == SEED and a.protocol == "rise2018" and a.mprt.maps
                for x, y in zip(a.mprt.maps, b.mprt.maps, strict=True):
                    np.testing.assert_array_equal(x, y, err_msg=method)
                np.testing.assert_array_equal(there.cards[method].curve.getData()[1],
                                              here.cards[method].curve.getData()[1])
            assert any(p.startswith("Checking the maps (gradcam): MPRT step ") and p.endswith(
                "(on the engine; Esc cancels)") for p in phases), phases
            qtbot.mouseClick(there.cards["gradcam"], Qt.LeftButton)  # the strip, drawn from the engine's maps
            strip = window.analysis.trust.strip
            try:
                card = there.cards["gradcam"].card
                assert len(strip.images) == len(card.mprt.layers) + 1
                for step, image in enumerate(strip.images):
                    np.testing.assert_allclose(image.image, np.abs(card.mprt.maps[step]), rtol=1e-6)
            finally:
                strip.close()
            assert "Error" not in window.banner.text(), window.banner.text()


def _evaluate(qtbot, window, data: Path, out: Path, cancel: bool = False):
    """Evaluate… from the window (its controller, as the dialog's Evaluate does); the state when it ended."""
    state = window.evaluation.state
    if cancel:
        stop = []

        def once(done, total):  # at the first report short of the end: on a quiet machine the engine's reports (at
            # most ten a second) of six images were "0 of 6" and "6 of 6" only, and a cancel waiting for a later
            # one never came
            if not stop and done < total:
                stop.append(done)
                window.evaluation.view.cancel_button.click()

        state.sigProgress.connect(once)
    assert window.evaluation.run(str(data), str(out), METHODS, ("deletion", "insertion"), "inspector", 4)
    qtbot.waitUntil(lambda: not state.building, timeout=WAIT_MS)
    if cancel:
        state.sigProgress.disconnect(once)
    return state


def test_evaluate_on_a_remote_engine_writes_the_local_files_and_a_cancel_stops_it(qtbot, ui, open_window,
                                                                                  tmp_path, monkeypatch):
    if not ui.has_demo():
        pytest.skip("the demo model's files are not installed")
    local = open_window(settings_=_settings(tmp_path / "local" / "inspector.ini"))
    with engine_server(tmp_path / "server") as (_process, url, token_file):
        images = tmp_path / "server" / "data" / "images"
        images.mkdir()
        rng = np.random.default_rng(3)
        for i in range(6):
            Image.fromarray(rng.integers(0, 256, (40, 48, 3), dtype=np.uint8)).save(images / f"{i}.png")
        here = _evaluate(qtbot, local, images, tmp_path / "here")
        assert here.build_phase == "done", local.evaluation.view.message.text()
        with remote_window(qtbot, ui, url, token_file, tmp_path / "remote") as window:
            out = tmp_path / "server" / "data" / "evaluation"
            texts = []
            window.evaluation.state.sigBuildText.connect(texts.append)
            there = _evaluate(qtbot, window, images, out, cancel=True)  # Cancel once it runs: stopped on the engine
            assert there.build_phase == "cancelled", window.evaluation.view.message.text()
            assert (out / "evaluation.job.json").is_file() and not (out / "summary.json").exists()
            assert "Evaluate again with the same choices" in window.evaluation.view.message.text()
            assert any(t.startswith("Evaluation: ") and "of 6 images" in t for t in texts), texts
            there = _evaluate(qtbot, window, images, out)  # the same choices: it goes on there and finishes
            assert there.build_phase == "done", window.evaluation.view.message.text()
            for name in FILES:
                assert (out / name).read_bytes() == (tmp_path / "here" / name).read_bytes(), name
            assert there.shown.summary == here.shown.summary and there.shown.out_dir == str(out)
            assert window.evaluation.view.shown_rows() == local.evaluation.view.shown_rows()
            assert "Error" not in window.banner.text(), window.banner.text()
            # Attribution > Open evaluation…: the folder chosen on the server is read there. Named relative to its
            # data root, as only the server can read it (failed before: read on this machine, "evaluation holds no
            # finished evaluation")
            from inspector.gui.common import file_dialogs

            state, asked = window.evaluation.state, []
            state.shown = None
            monkeypatch.setattr(file_dialogs, "choose_folder", lambda _p, kind, _t, _s="", engine=False:
                                asked.append((kind, engine)) or "evaluation")
            window.evaluation.open_dialog()
            qtbot.waitUntil(lambda: state.shown is not None, timeout=WAIT_MS)
            assert asked == [("evaluation-out", True)] and state.shown.out_dir == "evaluation"
            assert state.shown.summary == here.shown.summary
            assert window.evaluation.view.shown_rows() == local.evaluation.view.shown_rows()
            notices = []
            window.state.sigNotice.connect(notices.append)
            (tmp_path / "server" / "data" / "empty").mkdir()
            assert window.evaluation.open("empty")  # a server folder with no summary: the server's one line
            qtbot.waitUntil(lambda: bool(notices), timeout=WAIT_MS)
            server_empty = tmp_path / "server" / "data" / "empty"
            assert [n.text for n in notices] == [f"{server_empty} holds no finished evaluation (no summary.json)."]
            assert window.evaluation.view.shown_rows() == local.evaluation.view.shown_rows()  # what it showed stays
