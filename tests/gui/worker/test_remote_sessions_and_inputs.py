"""Issue 53 item 4: sessions, folders and videos on a remote engine (a real `network-inspector serve` on 127.0.0.1), on
the demo model against a window whose engine is in this process.

A session saved from the window on the engine opens again there and in process with the same model, layers, edits,
target and input (the input is the server's path: in process it is read from this machine, the same file here). A
folder of the server's data root is listed there (Folder > image N) and each image runs there; a video is decoded
here and each frame runs there. The shown layer's arrays and the predictions equal the in-process window's exactly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import QSettings

# the same numbers need the same arithmetic: the server's one thread here too (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("threads_as_the_server")

TICKS = {"conv1", "relu3", "fc"}
WAIT_MS = 60_000


@pytest.fixture(scope="module")
def served(tmp_path_factory, remote_servers):
    with remote_servers.engine_server(tmp_path_factory.mktemp("sessions") / "server") as server:
        images = server.root / "images"
        (images / "b").mkdir(parents=True)
        rng = np.random.default_rng(5)
        for name in ("a.png", "b/c.png", "d.png"):
            Image.fromarray((rng.random((48, 56, 3)) * 255).astype(np.uint8)).save(images / name)
        yield server


def _settings(path: Path, input: str = "sample:star") -> QSettings:
    path.parent.mkdir(parents=True, exist_ok=True)
    s = QSettings(str(path), QSettings.IniFormat)
    s.setValue("model/source", "demo")
    s.setValue("input", input)
    s.setValue("ticks/demo", json.dumps(sorted(TICKS)))
    s.sync()
    return s


@pytest.fixture
def windows(qtbot, ui, open_window, served, tmp_path):
    """windows(name) -> (the window in process, a window on the engine), both on the demo model, first result shown."""
    from inspector.gui.window.main_window import MainWindow

    if not ui.has_demo():
        pytest.skip("the demo model's files are not installed")
    opened = []

    def open_(name: str, on_engine: bool = True):
        if not on_engine:
            return open_window(settings_=_settings(tmp_path / name / "inspector.ini"))
        window = MainWindow(settings=_settings(tmp_path / name / "inspector.ini"), ask_trust=lambda _n, _w: True,
                            engine=served.url, token_file=str(served.root.parent / "token"))
        opened.append(window)
        window.show()
        ui.expect_result(qtbot, window)
        return window

    yield open_
    for window in opened:
        window.close()
        assert window.worker_thread.thread.isFinished()
        window.deleteLater()


def _same_panels(a, b) -> None:
    """Two outcomes' shown layer: the same arrays (activation and gradient), and the same output and predictions."""
    layer = a.result.captures
    names = [n for n, c in layer.items() if c.array is not None and n.split(":")[0] == "conv1"]
    assert names, "nothing of conv1 came"
    for name in names:
        np.testing.assert_array_equal(b.result.captures[name].array, layer[name].array, err_msg=name)
    np.testing.assert_array_equal(b.result.output, a.result.output)
    np.testing.assert_array_equal(b.result.input, a.result.input)
    assert b.result.predictions == a.result.predictions


def test_a_session_saved_on_the_engine_opens_there_and_in_process(qtbot, ui, windows, served, tmp_path):
    from inspector.core.edits import parse_edit
    from inspector.core.session.file import load_session

    image = str(served.root / "images" / "d.png")  # the server's path
    first = windows("first")
    first.state.set_edits([parse_edit("conv1:output=scale(2)"), parse_edit("relu3:grad_output=clamp(min=0)")])
    ui.expect_result(qtbot, first)
    first.state.set_target("3")
    ui.expect_result(qtbot, first)
    first.state.set_input(image)
    saved_outcome = ui.expect_result(qtbot, first)
    path = tmp_path / "on-engine.inspector.json"
    first.edits.save(str(path))
    assert first.banner.text() == f"Saved the session to {path}."
    saved = load_session(path)
    assert (saved.model, saved.input, saved.target) == ("demo", image, "3")
    assert set(saved.layers) == TICKS and [str(e) for e in saved.edits] == ["conv1:output=scale(k=2)",
                                                                            "relu3:grad_output=clamp(min=0)"]
    for name, on_engine in (("again", True), ("here", False)):
        window = windows(name, on_engine)
        shown = []  # the results shown of runs on the session's input and target
        window.sigResultShown.connect(lambda o, w=window, shown=shown: w.state.asked_on.get(o.run_id)
                                      == (image, "3") and shown.append(o))
        assert window.edits.load(str(path), trust=False), window.banner.text()
        qtbot.waitUntil(lambda shown=shown: bool(shown), timeout=WAIT_MS)
        outcome, state = shown[0], window.state
        assert (state.model.source, state.input, state.target) == ("demo", image, "3"), name
        assert set(state.ticks) == TICKS and state.edits == first.state.edits, name
        assert window.state.worker is not first.state.worker
        _same_panels(saved_outcome, outcome)


def test_a_folder_of_the_server_steps_there_as_in_process(qtbot, ui, windows, served):
    folder = str(served.root / "images")
    shown = {}
    for name, on_engine in (("here", False), ("there", True)):
        window = windows(name, on_engine)
        window.state.folder.open(folder)
        ui.expect_result(qtbot, window)
        assert window.folder_bar.label.text() == "1 of 3: a.png"
        window.state.folder.go_to(1)  # Folder > image 2: in the nested folder
        shown[name] = ui.expect_result(qtbot, window)
        assert window.folder_bar.label.text() == "2 of 3: b/c.png"
        assert window.state.input == str(served.root / "images" / "b" / "c.png")
    _same_panels(shown["here"], shown["there"])


def test_a_folder_the_server_cannot_list_is_its_one_line(qtbot, ui, windows, tmp_path):
    window = windows("there")
    window.state.folder.open(str(tmp_path))  # outside the server's data root
    qtbot.waitUntil(lambda: window.banner.isVisible() and "refused" in window.banner.text(), timeout=WAIT_MS)
    said = window.banner.text()
    assert "\n" not in said and said.startswith(f"Error: The folder {tmp_path} is outside this server's data root")
    assert said.endswith("Still showing sample:star.") and window.state.input == "sample:star"


def test_a_server_folder_typed_in_the_input_box_steps_there(qtbot, ui, windows, served):
    """The Input box, Enter: a name with no image, tensor or video suffix is a folder of the server (this machine
    cannot look). Named relative to the data root, as only the server can read it (failed before: run as a file)."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    window = windows("there")
    window.input_combo.setEditText("images")
    QTest.keyClick(window.input_combo.lineEdit(), Qt.Key_Return)
    ui.expect_result(qtbot, window)
    assert window.folder_bar.label.text() == "1 of 3: a.png"
    assert window.state.input == str(served.root / "images" / "a.png")


def test_a_pasted_or_dropped_file_is_one_line_on_a_remote_engine(qtbot, ui, windows, tmp_path):
    """The engine reads its server's files: an image pasted, or a file of this machine dropped on the window, is one
    line (before, it became an input the server could not read, or a model it was asked to load from this path)."""
    from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
    from PySide6.QtGui import QDropEvent, QGuiApplication, QImage

    window = windows("there")
    notices = []
    window.state.sigNotice.connect(notices.append)
    image = QImage(8, 8, QImage.Format_RGB32)
    image.fill(Qt.red)
    QGuiApplication.clipboard().setImage(image)
    window.paste_image()
    local = tmp_path / "here.png"
    image.save(str(local))
    weights = tmp_path / "model.pt"
    weights.write_bytes(b"not loaded")
    for path in (local, weights):
        mime = QMimeData()
        mime.setUrls([QUrl.fromLocalFile(str(path))])
        window.dropEvent(QDropEvent(QPointF(10, 10), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier))
    tail = ("on this machine, and the engine reads its server's files: choose one there with File > Open input… (or "
            "Open model…). Still showing sample:star.")
    assert [(n.level, n.text) for n in notices] == [("error", f"A pasted image stays {tail}"),
                                                   ("error", f"{local} is {tail}"), ("error", f"{weights} is {tail}")]
    qtbot.wait(100)
    assert window.state.input == "sample:star" and window.state.model.source == "demo"


def test_a_videos_frames_run_on_the_engine_as_in_process(qtbot, ui, windows, tmp_path):
    from inspector.core.inputs.video import write_video

    rng = np.random.default_rng(7)
    clip = str(write_video(tmp_path / "clip.mp4", [(rng.random((64, 64, 3)) * 255).astype(np.uint8)
                                                   for _ in range(4)], fps=25))
    frames = {}
    for name, on_engine in (("here", False), ("there", True)):
        window = windows(name, on_engine)
        got = frames.setdefault(name, {})
        window.sigResultShown.connect(lambda o, w=window, got=got: got.setdefault(w.state.live.shown_frame.index, o))
        window.state.live.open(clip, pace="demand")  # every frame runs
        qtbot.waitUntil(lambda w=window, got=got: w.state.live.feed.ended and not w.state.live.busy
                        and len(got) == 4, timeout=WAIT_MS)
        assert window.live_bar.label.text() == "clip.mp4: frame 4 of 4 (ended)"
        window.state.live.stop()
    assert sorted(frames["there"]) == [0, 1, 2, 3]
    for index in range(4):
        _same_panels(frames["here"][index], frames["there"][index])
