"""The window on a remote engine (issue 53 item 4): a real `network-inspector serve` on 127.0.0.1, the app connected to
it (`MainWindow(engine=URL, token_file=FILE)`, the `RemoteWorker`), against a window whose engine is in this process.

The demo model on sample:star: the model tree arrives, a run's panels show, the shown layer's arrays and the
predictions are the local window's exactly, a Grad-CAM map too; the Graph tab draws the local window's graph, opens
a group and paints its gradient overlay as it does; the tensor panels are the local window's pixel for pixel and an
integrated-gradients map is the local one; Concepts built, cancelled, resumed, read and mapped on the engine are the
local window's, and so is a concept's page (pixel for pixel), its top image used as the input runs there and a
dictionary remembered for the model opens there again (one gone: the server's one line); the model catalogue is the
local one; a dictionary folder outside
the server's data root is refused in one line; the status
bar names the engine; the server killed mid-session is a one-line banner and the window keeps its last
result. Every wait is bounded; the server is stopped whatever happens."""

from __future__ import annotations

import json
import re
import select
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import shiboken6
from PySide6.QtCore import QSettings

# the same numbers need the same arithmetic: the server's one thread here too (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("threads_as_the_server")

STARTUP_S = 60.0
STOP_S = 10.0
TICKS = {"conv1", "relu3", "fc"}
WAIT_MS = 60_000


def _first_line(process: subprocess.Popen, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], min(0.5, max(0.0, deadline - time.monotonic())))
        if ready:
            return process.stdout.readline()
        if process.poll() is not None:
            return ""
    raise AssertionError(f"the server said nothing within {timeout:g} s")


def _stop(process: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(STOP_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(STOP_S)
    if process.stdout is not None:
        process.stdout.close()


@contextmanager
def engine_server(folder: Path):
    """`serve --port 0` with its token file and data root in `folder`: (process, url, token file); stopped
    (SIGTERM, then SIGKILL) whatever happens."""
    root = folder / "data"
    root.mkdir(parents=True, exist_ok=True)
    stderr = folder / "stderr.txt"
    with open(stderr, "w") as err:
        process = subprocess.Popen([sys.executable, "-m", "inspector", "serve", "--port", "0", "--token-file",
                                    str(folder / "token"), "--data-root", str(root)],
                                   stdout=subprocess.PIPE, stderr=err, text=True, cwd=folder)
    try:
        line = _first_line(process, STARTUP_S)
        found = re.search(r"(wss?://[^\s;]+)", line)
        assert found, f"no address in {line!r}; stderr: {stderr.read_text()[-2000:]}"
        yield process, found.group(1), folder / "token"
    finally:
        _stop(process)


def _settings(path: Path) -> QSettings:
    path.parent.mkdir(parents=True, exist_ok=True)
    s = QSettings(str(path), QSettings.IniFormat)
    s.setValue("model/source", "demo")
    s.setValue("input", "sample:star")
    s.setValue("ticks/demo", json.dumps(sorted(TICKS)))
    s.sync()
    return s

@contextmanager
def remote_window(qtbot, ui, url: str, token_file, folder: Path):
    """A MainWindow on the engine at `url` (its settings in `folder`), shown with its first result; closed after,
    whatever happens, its worker's thread ended."""
    from inspector.gui.window.main_window import MainWindow

    window = MainWindow(settings=_settings(folder / "inspector.ini"), ask_trust=lambda _name, _what: True, engine=url,
                        token_file=str(token_file))
    try:
        window.show()
        ui.expect_result(qtbot, window)
        yield window
    finally:
        window.close()
        assert window.worker_thread.thread.isFinished()
        window.deleteLater()



def _stats_done(qtbot, window) -> None:
    """Wait until the window's result has every statistic and its diagnostics."""
    qtbot.waitUntil(lambda: window.outcome is not None and window.outcome.complete
                    and (not window.outcome.analyse or window.outcome.analysis is not None), timeout=WAIT_MS)


def _shown_graph(qtbot, window):
    """The Graph tab shown and drawn: its controller."""
    window.tabs.setCurrentWidget(window.views.graph)
    qtbot.waitUntil(lambda: window.graph.layout is not None, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: not window.views.graph.scene.drawing(), timeout=WAIT_MS)
    return window.graph


def _same_graph_tab(qtbot, local, window) -> None:
    """The Graph tab on the remote engine draws what the window with its engine here draws: the same graph, the same
    boxes; a group opened is laid out here (from the graph the engine sent) as in process; the gradient overlay
    paints the same values."""
    here, there = _shown_graph(qtbot, local), _shown_graph(qtbot, window)
    assert [n.id for n in there.graph.nodes] == [n.id for n in here.graph.nodes]
    assert [(e.source, e.target, e.shape) for e in there.graph.edges] == \
        [(e.source, e.target, e.shape) for e in here.graph.edges]
    assert there.layout == here.layout and set(window.views.graph.scene.nodes) == set(local.views.graph.scene.nodes)
    assert "conv1" in window.views.graph.scene.nodes
    group = next(g.id for g in there.graph.groups if not g.parent)
    for w in (local, window):
        before = w.graph.layout
        w.graph.toggle(group)
        qtbot.waitUntil(lambda w=w, before=before: w.graph.layout is not before
                        and group in w.graph.layout.open_groups, timeout=WAIT_MS)
    assert there.layout == here.layout and set(there.layout.frames) == {group}
    for w in (local, window):
        values = w.graph_values
        values.choose("gradient")
        qtbot.waitUntil(lambda values=values: values.found is not None and values.key == values.request_key()
                        and values.painter.drawn is not None, timeout=WAIT_MS)
    assert window.graph_values.found.to_json() == local.graph_values.found.to_json()
    assert window.graph_values.found.nodes["conv1"].grad_sq > 0
    fills = {k: item.fill for k, item in window.views.graph.scene.nodes.items()}
    assert fills == {k: item.fill for k, item in local.views.graph.scene.nodes.items()}
    assert any(fill is not None for fill in fills.values())


def _gradcam(qtbot, window):
    found = []
    window.state.analysis.sigAttribution.connect(found.append)
    window.state.analysis.sigAttributionFailed.connect(found.append)
    assert window.state.analysis.request_attribution("gradcam", "", "relu3")
    qtbot.waitUntil(lambda: bool(found), timeout=WAIT_MS)
    assert not isinstance(found[0], str), found[0]
    return found[0]


def _same_shown(local, remote) -> None:
    """The shown layer's arrays and the predictions of the two windows' results, exactly."""
    a, b = local.outcome.result, remote.outcome.result
    layer = local.state.layer
    assert layer and remote.state.layer == layer
    names = [n for n in a.captures if n.rsplit(":", 1)[0] == layer and a.captures[n].array is not None]
    assert names, f"nothing captured at {layer}"
    for name in names:
        assert b.captures[name].array is not None, f"{name} did not come"
        np.testing.assert_array_equal(b.captures[name].array, a.captures[name].array, err_msg=name)
        assert b.captures[name].stats == a.captures[name].stats, name
    np.testing.assert_array_equal(b.output, a.output)
    assert b.predictions == a.predictions
    assert set(b.captures) == set(a.captures)
    for name, capture in a.captures.items():  # every statistic, worked out where the tensors are
        assert b.captures[name].stats == capture.stats, name


def test_the_window_on_a_remote_engine_is_the_local_one(qtbot, ui, open_window, tmp_path):
    from inspector.gui.window.main_window import MainWindow
    from inspector.gui.worker.remote import RemoteWorker

    if not ui.has_demo():
        pytest.skip("the demo model's files are not installed")
    local = open_window(settings_=_settings(tmp_path / "local" / "inspector.ini"))
    _stats_done(qtbot, local)
    with engine_server(tmp_path / "server") as (process, url, token_file):
        window = MainWindow(settings=_settings(tmp_path / "remote" / "inspector.ini"),
                            ask_trust=lambda _name, _what: True, engine=url, token_file=str(token_file))
        try:
            window.show()
            assert isinstance(window.worker, RemoteWorker)
            first = ui.expect_result(qtbot, window)
            # the model tree came from the engine: the same layers as the local window's
            assert [l.path for l in window.loaded.tree.layers] == [l.path for l in local.loaded.tree.layers]
            assert window.state.devices and window.state.devices[0][0] == "cpu"  # the server's, from its hello
            assert window.run_status.engine.text() == f"engine {url} · cpu"
            assert first.run_id == window.state.last_run_id
            _stats_done(qtbot, window)
            _same_shown(local, window)
            assert window.outcome.analysis.dead == local.outcome.analysis.dead
            assert window.outcome.analysis.nonfinite == local.outcome.analysis.nonfinite
            # another layer shown: its arrays, held on the engine (only what is seen crosses), come and are drawn
            assert window.state.layer == "conv1"
            for w in (local, window):
                w.state.select_layer("relu3")
            shown = ("relu3:output", "relu3:grad_output")
            qtbot.waitUntil(lambda: all(window.outcome.result.captures[n].array is not None for n in shown)
                            and window.activation_panel.key == "relu3:output", timeout=WAIT_MS)
            assert not set(shown) & set(window.outcome.result.held)
            for name in shown:
                np.testing.assert_array_equal(window.outcome.result.captures[name].array,
                                              local.outcome.result.captures[name].array, err_msg=name)
            # an export would miss the arrays still on the engine: refused in one line, nothing written
            if window.outcome.result.held:
                window.analysis.export(str(tmp_path / "captures.npz"))
                assert window.banner.text() == (
                    f"Error: Not exported: {len(window.outcome.result.held)} captures are held on the engine "
                    f"({window.outcome.result.held[0]}, ...); `network-inspector capture --engine {url}` writes them "
                    f"all.")
                assert not list(tmp_path.glob("captures*"))
            # a Grad-CAM map made on the engine is the local one
            here, there = _gradcam(qtbot, local), _gradcam(qtbot, window)
            assert (there.method, there.layer, there.target_index) == (here.method, here.layer, here.target_index)
            np.testing.assert_array_equal(there.map, here.map)
            # the model catalogue is the engine's: the names the local worker lists
            catalogues = {}
            for name, w in (("local", local), ("remote", window)):
                w.state.sigCatalogue.connect(lambda names, name=name: catalogues.setdefault(name, names))
                w.state.request_catalogue()
            qtbot.waitUntil(lambda: len(catalogues) == 2, timeout=WAIT_MS)
            assert catalogues["remote"] == catalogues["local"] and "resnet18" in catalogues["remote"]
            _same_graph_tab(qtbot, local, window)
            window.tabs.setCurrentIndex(0)  # the Layer tab again
            local.tabs.setCurrentIndex(0)
            # a folder outside the server's data root: refused there in one line
            assert window.concepts.state.open(str(tmp_path))
            qtbot.waitUntil(lambda: "Concepts not opened" in window.banner.text(), timeout=WAIT_MS)
            said = window.banner.text()
            assert "\n" not in said and said.startswith(f"Error: Concepts not opened: The dictionary folder "), said
            assert "outside this server's data root" in said
            # a token the server does not know: refused in one line, before anything runs
            wrong = tmp_path / "wrong-token"
            wrong.write_text("y" * 43)
            refused = MainWindow(settings=_settings(tmp_path / "refused" / "inspector.ini"),
                                 ask_trust=lambda _name, _what: True, engine=url, token_file=str(wrong))
            try:
                refused.show()
                qtbot.waitUntil(lambda: refused.banner.isVisible(), timeout=20_000)
                said = refused.banner.text()
                assert "\n" not in said and said.startswith(f"Error: {url} refused the connection (401)"), said
                assert refused.state.devices is None and refused.outcome is None
            finally:
                refused.close()
                refused.deleteLater()
            # the server gone mid-session: one line in the banner; the window keeps its last result
            shown = window.outcome
            _stop(process, signal.SIGKILL)
            qtbot.waitUntil(lambda: window.banner.isVisible() and "Lost the engine" in window.banner.text(),
                            timeout=10_000)
            said = window.banner.text()
            assert "\n" not in said and f"Lost the engine at {url}: " in said, said
            assert window.outcome is shown
            assert window.run_status.engine.text() == f"engine {url} · cpu · lost"
            window.state.schedule_run(force=True)  # a run asked for now: answered with the line, not left waiting
            qtbot.waitUntil(lambda: not window.state.timer.isActive() and window.state.phase == "", timeout=5_000)
            assert window.outcome is shown
            graphs = []  # the Graph tab's request too: its answer is the line, as the tab shows a failure
            window.state.graph.sigGraph.connect(lambda asked, found: graphs.append((asked, found)))
            window.state.graph.record(window.state.model.request, "sample:star", 99)
            qtbot.waitUntil(lambda: bool(graphs), timeout=5_000)
            assert graphs[0][0] == 99 and graphs[0][1].message.startswith(f"Lost the engine at {url}: ")
        finally:
            window.close()
            assert window.worker_thread.thread.isFinished()
            window.deleteLater()


def test_a_server_that_is_not_there_is_one_line(qtbot, tmp_path):
    """No engine at the address: the banner says so in one line; the window is usable and closes cleanly."""
    import socket

    from inspector.gui.window.main_window import MainWindow

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = tmp_path / "token"
    token.write_text("x" * 43)
    url = f"ws://127.0.0.1:{port}"
    window = MainWindow(settings=_settings(tmp_path / "s" / "inspector.ini"), ask_trust=lambda _n, _w: True,
                        engine=url, token_file=str(token))
    try:
        window.show()
        qtbot.waitUntil(lambda: window.banner.isVisible() and url in window.banner.text(), timeout=20_000)
        said = window.banner.text()
        assert "\n" not in said and said.startswith(f"Error: Cannot reach the engine at {url}: "), said
        assert window.outcome is None
    finally:
        window.close()
        assert window.worker_thread.thread.isFinished()
        window.deleteLater()


def test_a_server_of_another_protocol_version_is_refused_in_one_line(qtbot, tmp_path):
    """A server whose hello speaks protocol version 99: the banner names both versions in one line."""
    import threading

    from websockets.sync.server import serve

    from inspector.gui.window.main_window import MainWindow
    from inspector.protocol import VERSION

    def hello_of_another_version(ws) -> None:
        ws.send(json.dumps({"v": 99, "kind": "hello", "id": "hello", "body": {"devices": [["cpu", "CPU"]]}}))
        try:
            ws.recv(timeout=10)  # until the client goes
        except Exception:  # noqa: BLE001, S110 - closed: the handler ends
            pass

    token = tmp_path / "token"
    token.write_text("x" * 43)
    server = serve(hello_of_another_version, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, name="protocol-99-server")
    thread.start()
    url = f"ws://127.0.0.1:{server.socket.getsockname()[1]}"
    try:
        window = MainWindow(settings=_settings(tmp_path / "s" / "inspector.ini"), ask_trust=lambda _n, _w: True,
                            engine=url, token_file=str(token))
        try:
            window.show()
            qtbot.waitUntil(lambda: window.banner.isVisible() and "protocol version" in window.banner.text(),
                            timeout=20_000)
            said = window.banner.text()
            assert said == f"Error: The server at {url} speaks protocol version 99; this client speaks version {VERSION}."
            assert window.state.devices is None and window.outcome is None  # nothing of that server was taken
        finally:
            window.close()
            assert window.worker_thread.thread.isFinished()
            window.deleteLater()
    finally:
        server.shutdown()
        thread.join(10)


def test_connect_to_engine_reopens_the_window_there_and_back(qtbot, ui, open_window, tmp_path):
    """File > Connect to engine…: the window reopens on the engine with what it showed, and back on this process."""
    from inspector.gui.window.main_window import MainWindow
    from inspector.gui.worker.remote import RemoteWorker
    from inspector.gui.views.connect_dialog import ConnectDialog
    from inspector.gui.worker.local import Worker

    if not ui.has_demo():
        pytest.skip("the demo model's files are not installed")
    dialog = ConnectDialog("http://127.0.0.1:1", str(tmp_path / "no-token"))
    qtbot.addWidget(dialog)
    dialog.accept()
    assert dialog.result() != ConnectDialog.Accepted
    assert dialog.said.text() == "The engine's address is ws://HOST:PORT or wss://HOST:PORT, not 'http://127.0.0.1:1'."
    dialog.address.setText("ws://127.0.0.1:1")
    dialog.accept()
    assert dialog.said.text() == f"No token file at {tmp_path / 'no-token'}."

    local = open_window(settings_=_settings(tmp_path / "local" / "inspector.ini"))
    local.state.set_ticks(TICKS - {"conv1"})
    with engine_server(tmp_path / "server") as (_process, url, token_file):
        remote = local.reopen_on(url, str(token_file))
        back = None
        try:
            assert isinstance(remote, MainWindow) and isinstance(remote.worker, RemoteWorker)
            ui.expect_result(qtbot, remote)
            assert remote.loaded.source == "demo" and remote.state.input == "sample:star"
            assert remote.state.ticks == TICKS - {"conv1"}  # what the window showed, restored on the engine
            assert remote.run_status.engine.text() == f"engine {url} · cpu"
            back = remote.reopen_on(None)
            assert isinstance(back.worker, Worker)
            ui.expect_result(qtbot, back)
            assert back.run_status.engine.text() == "" and back.windowTitle() == "Network Inspector"
        finally:
            for window in (remote, back):
                if window is not None and shiboken6.isValid(window):
                    window.close()
                    assert window.worker_thread.thread.isFinished()
                    window.deleteLater()


def test_esc_after_the_panels_then_f5_brings_every_statistic(qtbot, tmp_path):
    """The RemoteWorker alone on a real server: Esc as soon as a run's panels came, then F5 (request_finish): one
    StatsUpdate of that run comes, whether the statistics were stopped on the server (then worked out again) or had
    already come; every statistic equals a run asked whole (visible None); nothing failed."""
    from inspector.core.records.requests import ModelRequest, RunRequest
    from inspector.core.runspec import RunSpec
    from inspector.gui.worker.remote import RemoteWorkerThread

    with engine_server(tmp_path / "server") as (_process, url, token_file):
        thread = RemoteWorkerThread(url, str(token_file))
        worker = thread.worker
        got = {"loaded": [], "result": [], "stats": [], "failed": []}
        worker.sigLoaded.connect(got["loaded"].append)
        worker.sigStatsUpdate.connect(got["stats"].append)
        worker.sigFailed.connect(got["failed"].append)

        def on_result(outcome) -> None:
            got["result"].append(outcome)
            if outcome.run_id == 1:  # Esc with the panels drawn, then F5
                worker.cancel()
                worker.request_finish(1)

        worker.sigResult.connect(on_result)
        try:
            worker.request_load(ModelRequest("demo"))
            qtbot.waitUntil(lambda: bool(got["loaded"] or got["failed"]), timeout=WAIT_MS)
            assert not got["failed"], got["failed"]
            spec = RunSpec.make(sorted(TICKS), ("output", "grad_output"))
            asked = RunRequest(ModelRequest("demo"), "sample:star", "cpu", spec, analyse=True, run_id=1,
                               visible=("conv1",))
            worker.request_run(asked)
            qtbot.waitUntil(lambda: bool(got["stats"] or got["failed"]), timeout=WAIT_MS)
            worker.request_run(replace(asked, run_id=2, visible=None))
            qtbot.waitUntil(lambda: len(got["result"]) == 2 or bool(got["failed"]), timeout=WAIT_MS)
            qtbot.wait(300)  # nothing more comes
            assert not got["failed"], got["failed"]
            assert [u.run_id for u in got["stats"]] == [1]
            update, whole = got["stats"][0], got["result"][1]
            assert whole.run_id == 2 and whole.complete
            assert update.stats == {n: c.stats for n, c in whole.result.captures.items()}
            assert update.analysis.dead == whole.analysis.dead
        finally:
            assert thread.stop()


def test_statistics_stopped_on_the_engine_are_asked_for_again_whole(qtbot):
    """The engine's side of the last test, without the race: a run `cancelled` after its panels came leaves its
    statistics unfinished; F5 sends that run again (its panels' arrays only cross), and its result is a StatsUpdate
    of the run on screen. A newer run waiting stops the statistics in flight (as in process)."""
    from inspector.core.records.failure import Failure
    from inspector.core.records.requests import ModelRequest, RunRequest
    from inspector.core.engine.result import RunResult
    from inspector.core.workbench import RunOutcome
    from inspector.gui.worker.remote import RemoteWorker
    from inspector.gui.worker.remote_lanes import Flight as _Flight
    from inspector.protocol.messages import Message

    class Client:  # what the engine's thread sends
        def __init__(self) -> None:
            self.sent = []

        def send(self, kind, body=None, key=None):
            self.sent.append((kind, body))
            return key or f"s{len(self.sent)}"

    worker, client = RemoteWorker("ws://127.0.0.1:1"), Client()
    updates = []
    worker.sigStatsUpdate.connect(updates.append)
    asked = RunRequest(ModelRequest("demo"), "sample:star", run_id=7, visible=("conv1",))
    partial = RunOutcome(7, RunResult())
    flight = _Flight("run", "run-1", asked)
    flight.partial = partial
    worker._flights["s0"] = flight
    worker.request_run(RunRequest(ModelRequest("demo"), "sample:other", run_id=8))  # a newer run waits
    worker._send_waiting(client)
    assert client.sent == [("cancel", "s0")] and flight.stopping  # its statistics stop; the newer run waits
    worker._on_event(Message("cancelled", "s0", "Cancelled."))
    assert worker._unfinished == (partial, asked)
    worker._lanes.drop("run")  # (Esc dropped the newer run)
    worker.request_finish(7)
    worker._send_waiting(client)
    kind, body = client.sent[-1]
    assert kind == "run" and body == asked
    worker._on_event(Message("result", next(iter(worker._flights)), RunOutcome(7, RunResult())))
    qtbot.waitUntil(lambda: bool(updates), timeout=5_000)
    assert updates[0].run_id == 7 and not worker._flights
    # a load in flight holds the run asked after it; the load failing drops that run (it was for that model)
    failed = []
    worker.sigFailed.connect(failed.append)
    worker.request_load(ModelRequest("missing.pt"))
    worker._send_waiting(client)
    assert client.sent[-1] == ("load", ModelRequest("missing.pt"))
    worker.request_run(RunRequest(ModelRequest("missing.pt"), "sample:star", run_id=9))
    worker._send_waiting(client)
    assert client.sent[-1][0] == "load" and worker.pending() == 1
    worker._on_event(Message("failure", next(iter(worker._flights)), Failure("No such file.", "load")))
    qtbot.waitUntil(lambda: bool(failed), timeout=5_000)
    assert failed[0].message == "No such file." and worker.pending() == 0
    worker._send_waiting(client)
    assert client.sent[-1][0] == "load" and not worker._flights


def test_an_atlas_built_on_the_engine_is_the_local_one(qtbot, ui, open_window, tmp_path):
    """Built over a folder in the server's data root, from the remote window: the same tops as the local window's
    build over the same images, and a channel's pictures (the pixels the model saw) the same."""
    from PIL import Image

    if not ui.has_demo():
        pytest.skip("the demo model's files are not installed")

    def build_and_pick(window, images: Path, out: Path):
        atlas = window.state.atlas
        got = []
        atlas.sigPictures.connect(got.append)
        window.state.set_ticks({"conv1"})
        ui.expect_result(qtbot, window)
        assert atlas.build(str(images), str(out), top=2, batch=2)
        qtbot.waitUntil(lambda: atlas.opened is not None or not atlas.building, timeout=WAIT_MS)
        assert atlas.opened is not None, window.banner.text()
        top = [(e["image"], e["score"]) for e in atlas.opened.atlas["layers"]["conv1"]["top"][3]]
        atlas.pictures("conv1", 3)  # (the view asks for the channel it shows too: the one of channel 3 is waited for)
        qtbot.waitUntil(lambda: any([(p.image, p.score) for p in g] == top for g in got), timeout=WAIT_MS)
        return atlas.opened, next(g for g in got if [(p.image, p.score) for p in g] == top)

    local = open_window(settings_=_settings(tmp_path / "local" / "inspector.ini"))
    with engine_server(tmp_path / "server") as (_process, url, token_file):
        images = tmp_path / "server" / "data" / "images"
        images.mkdir()
        rng = np.random.default_rng(1)
        for i in range(4):
            Image.fromarray((rng.random((40, 48, 3)) * 255).astype(np.uint8)).save(images / f"{i}.png")
        here, here_pictures = build_and_pick(local, images, tmp_path / "local-atlas")
        with remote_window(qtbot, ui, url, token_file, tmp_path / "remote") as window:
            there, there_pictures = build_and_pick(window, images, tmp_path / "server" / "data" / "atlas")
            assert there.atlas["layers"] == here.atlas["layers"]
            assert [(p.image, p.score, p.box) for p in there_pictures] == [(p.image, p.score, p.box)
                                                                          for p in here_pictures]
            for a, b in zip(there_pictures, here_pictures):
                np.testing.assert_array_equal(a.rgb, b.rgb)


def test_the_compare_tab_on_a_remote_engine_draws_a_held_layer_when_shown(qtbot, ui, open_window, tmp_path):
    """An edit, the Compare tab, another layer picked: its arrays of the edited run and of the baseline come from the
    engine and equal the local window's."""
    from inspector.core.edits import parse_edit

    if not ui.has_demo():
        pytest.skip("the demo model's files are not installed")
    local = open_window(settings_=_settings(tmp_path / "local" / "inspector.ini"))
    with engine_server(tmp_path / "server") as (_process, url, token_file):
        with remote_window(qtbot, ui, url, token_file, tmp_path / "remote") as window:
            for w in (local, window):
                w.state.set_edits([parse_edit("conv1:output=scale(2)")])
                ui.expect_result(qtbot, w)
                w.state.set_view("compare")
                _stats_done(qtbot, w)
                w.state.select_layer("relu3")
            names = ("relu3:output", "relu3:grad_output")
            qtbot.waitUntil(lambda: all(r.captures[n].array is not None for r in (window.outcome.result,
                                                                                   window.outcome.baseline)
                                        for n in names), timeout=WAIT_MS)
            for n in names:
                np.testing.assert_array_equal(window.outcome.result.captures[n].array,
                                              local.outcome.result.captures[n].array, err_msg=n)
                np.testing.assert_array_equal(window.outcome.baseline.captures[n].array,
                                              local.outcome.baseline.captures[n].array, err_msg=f"baseline {n}")
            assert window.banner.text() == "" or "Error" not in window.banner.text(), window.banner.text()


def _concepts_shown(qtbot, window, folder: str):
    """The Concepts dock on screen with the dictionary in `folder` opened and the image's concepts read, and the
    picked concept's relevance map drawn: (the reading, the map)."""
    controller = window.concepts
    maps = []
    controller.state.sigMap.connect(maps.append)
    controller.raise_view()
    assert controller.open(folder)
    qtbot.waitUntil(lambda: controller.view.opened is not None or "Not opened" in controller.view.message.text(),
                    timeout=WAIT_MS)
    assert controller.view.opened is not None, controller.view.message.text()
    qtbot.waitUntil(lambda: controller.view.reading is not None, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: any(m.concept == controller.state.selected for m in maps), timeout=WAIT_MS)
    return controller.view.reading, next(m for m in maps if m.concept == controller.state.selected)


def test_concepts_built_read_and_mapped_on_the_engine_are_the_local_ones(qtbot, ui, open_window, tmp_path):
    """Build… in the remote window learns a dictionary on the engine over a folder in its data root (its progress
    said by stage in the dock); Cancel once it runs stops it there (cancelled, its state kept) and building again
    resumes and finishes; the dock opens it and shows the same bars (coefficients, relevance), concept maps and
    relevance map as a window with its engine here that opens the same folder."""
    from inspector.core.concepts import load_dictionary
    from inspector.demo.shapes import render

    if not ui.has_demo():
        pytest.skip("the demo model's files are not installed")
    local = open_window(settings_=_settings(tmp_path / "local" / "inspector.ini"))
    with engine_server(tmp_path / "server") as (_process, url, token_file):
        root = tmp_path / "server" / "data"
        images, out = root / "images", root / "concepts"
        images.mkdir()
        rng = np.random.default_rng(1)
        for i in range(8):
            render(i, rng).save(images / f"{i:02d}.png")
        with remote_window(qtbot, ui, url, token_file, tmp_path / "remote") as window:
            controller, view = window.concepts, window.concepts.view
            texts, progress = [], []
            controller.state.sigBuildText.connect(texts.append)
            controller.state.sigProgress.connect(lambda done, total: progress.append((done, total)))
            assert controller.build(str(images), "relu3", 4, "sae", 2, str(out))
            qtbot.waitUntil(lambda: controller.state.build_phase == "running", timeout=WAIT_MS)
            view.cancel_button.click()  # on the engine: it stops after its batch
            qtbot.waitUntil(lambda: not controller.state.building, timeout=WAIT_MS)
            assert controller.state.build_phase == "cancelled", view.message.text()
            assert "Build again" in view.message.text() and view.opened is None
            assert (out / "concepts.partial.json").is_file() and not (out / "dictionary.safetensors").exists()
            assert any(t.startswith("Concepts: ") and "Esc cancels" in t for t in texts), texts
            assert progress and all(0 <= d <= t for d, t in progress)
            assert controller.build(str(images), "relu3", 4, "sae", 2, str(out))  # goes on where it stopped
            qtbot.waitUntil(lambda: not controller.state.building, timeout=WAIT_MS)
            assert controller.state.build_phase == "done", view.message.text()
            assert load_dictionary(out).method == "sae" and not (out / "concepts.partial.json").exists()
            there, there_map = _concepts_shown(qtbot, window, str(out))  # (the build opened it already)
            here, here_map = _concepts_shown(qtbot, local, str(out))
            assert (there.layer, there.target, there.folder) == (here.layer, here.target, here.folder)
            for name in ("coefficients", "relevance", "maps", "grid"):
                np.testing.assert_array_equal(getattr(there, name), getattr(here, name), err_msg=name)
            np.testing.assert_array_equal(view.coefficients.heights(), local.concepts.view.coefficients.heights())
            np.testing.assert_array_equal(view.relevance.heights(), local.concepts.view.relevance.heights())
            assert (there_map.concept, there_map.target) == (here_map.concept, here_map.target)
            np.testing.assert_array_equal(there_map.map, here_map.map)
            assert view.opened == local.concepts.view.opened  # the record too: the pages' tops and scores
            # Ablate the picked concept: the run with that edit, on the engine, is the local one
            for w in (local, window):
                before = w.outcome
                assert w.concepts.state.add_edit("ablate")
                qtbot.waitUntil(lambda w=w, before=before: w.outcome is not before and bool(w.outcome.result.edits),
                                timeout=WAIT_MS)
                _stats_done(qtbot, w)
            assert [str(e) for e in window.state.edits] == [str(e) for e in local.state.edits]
            assert "ablate_concept" in str(window.state.edits[0])
            np.testing.assert_array_equal(window.outcome.result.output, local.outcome.result.output)
            name = "relu3:output"  # (Compare shows the dictionary's layer: its arrays come when shown)
            qtbot.waitUntil(lambda: window.outcome.result.captures[name].array is not None, timeout=WAIT_MS)
            np.testing.assert_array_equal(window.outcome.result.captures[name].array,
                                          local.outcome.result.captures[name].array)
            assert "Error" not in window.banner.text(), window.banner.text()


def _rgba(image) -> np.ndarray:
    """A QImage (or QPixmap) as an (H, W, 4) uint8 array."""
    from PySide6.QtGui import QImage, QPixmap

    image = (image.toImage() if isinstance(image, QPixmap) else image).convertToFormat(QImage.Format_RGBA8888)
    rows = np.frombuffer(image.constBits(), np.uint8, image.sizeInBytes()).reshape(image.height(),
                                                                                     image.bytesPerLine())
    return rows[:, :image.width() * 4].reshape(image.height(), image.width(), 4).copy()


def test_a_concepts_page_its_top_image_and_a_remembered_dictionary_on_the_engine(qtbot, ui, open_window, tmp_path):
    """The last of the Concepts dock that read the folder on this machine, on the engine now: a concept's Page… shows
    the local window's page pixel for pixel (its pixels sent by the engine: `concepts` `page`), and a page the folder
    lacks says so; Use the top image as input sends its path and runs on it there, and a top image gone from the
    server is the server's one line; a dictionary remembered for the model (named relative to the server's data
    root: no such folder here) opens again when the model loads, is read there and its concept's Ablate runs there,
    and one that is gone is the server's one line."""
    from PIL import Image
    from PySide6.QtCore import QSettings

    from inspector.core import load_model
    from inspector.core.concepts import learn_concepts
    from inspector.demo.shapes import render
    from inspector.gui.window.main_window import MainWindow

    if not ui.has_demo():
        pytest.skip("the demo model's files are not installed")
    local = open_window(settings_=_settings(tmp_path / "local" / "inspector.ini"))
    with engine_server(tmp_path / "server") as (_process, url, token_file):
        root = tmp_path / "server" / "data"
        images, out = root / "images", root / "shapes-concepts"
        images.mkdir()
        rng = np.random.default_rng(0)
        for i in range(8):
            render(i, rng).save(images / f"{i:02d}.png")
        learn_concepts(load_model("demo"), images, "relu3", out, k=4, epochs=2, top=2)
        ini = tmp_path / "remote" / "inspector.ini"

        def remote_window(remembered: str | None = None):
            settings = _settings(ini)
            if remembered is not None:
                settings.setValue("concepts/demo", remembered)
                settings.sync()
            window = MainWindow(settings=settings, ask_trust=lambda _name, _what: True, engine=url,
                                token_file=str(token_file))
            window.show()
            return window

        window = remote_window()
        try:
            ui.expect_result(qtbot, window)
            for w in (window, local):
                _concepts_shown(qtbot, w, str(out))
            concept = window.concepts.state.selected
            assert concept == local.concepts.state.selected
            # Page…: the engine's pixels, drawn as the local window draws the file
            pictures = []
            window.concepts.state.sigPage.connect(pictures.append)
            for w in (local, window):
                w.concepts.view.page_button.click()
            qtbot.waitUntil(lambda: bool(pictures), timeout=WAIT_MS)
            here, there = local.concepts.page, window.concepts.page
            with Image.open(out / "pages" / f"concept_{concept:03d}.png") as image:
                np.testing.assert_array_equal(pictures[0].rgb, np.asarray(image.convert("RGB")))
            assert there.isVisible() and not there.picture.pixmap().isNull()
            assert there.windowTitle() == here.windowTitle() and there.caption.text() == here.caption.text()
            np.testing.assert_array_equal(_rgba(there.picture.pixmap()), _rgba(here.picture.pixmap()))
            other = next(c for c in range(4) if c != concept)
            (out / "pages" / f"concept_{other:03d}.png").unlink()
            window.concepts.show_page(other)
            qtbot.waitUntil(lambda: len(pictures) == 2, timeout=WAIT_MS)
            assert there.concept == other and there.picture.pixmap().isNull()
            assert there.picture.text().startswith("No page at ") and "\n" not in there.picture.text()
            window.concepts.show_page(concept)
            qtbot.waitUntil(lambda: len(pictures) == 3, timeout=WAIT_MS)
            # Use the top image as input: its path, run on there
            top = window.concepts.state.opened.record["concepts"][concept]["top"][0]["image"]
            there.use.click()
            assert window.state.input == str(images / top)
            ui.expect_result(qtbot, window)
            assert window.state.shown_choice[0] == str(images / top)
            window.state.set_input("sample:star")
            ui.expect_result(qtbot, window)
            (images / top).unlink()  # gone from the server: its one line
            there.use.click()
            said = ui.expect_failure(qtbot, window)
            assert "\n" not in said and top in said, said
            qtbot.waitUntil(lambda: window.banner.isVisible(), timeout=WAIT_MS)
            assert "\n" not in window.banner.text() and top in window.banner.text(), window.banner.text()
            assert QSettings(str(ini), QSettings.IniFormat).value("concepts/demo") == str(out)
        finally:
            window.close()
            window.deleteLater()
        # remembered as the server names it (relative to its data root): opened there when the model loads
        assert not Path("shapes-concepts").exists()
        again = remote_window("shapes-concepts")
        try:
            ui.expect_result(qtbot, again)
            qtbot.waitUntil(lambda: again.concepts.state.opened is not None
                            or "Concepts not opened" in again.banner.text(), timeout=WAIT_MS)
            opened = again.concepts.state.opened
            assert opened is not None, again.banner.text()
            assert (opened.folder, opened.layer, opened.k) == ("shapes-concepts", "relu3", 4)
            again.concepts.raise_view()  # read there, and its concept's edit run there (the folder is the server's)
            qtbot.waitUntil(lambda: again.concepts.view.reading is not None, timeout=WAIT_MS)
            before = again.outcome
            assert again.concepts.state.add_edit("ablate")
            qtbot.waitUntil(lambda: again.outcome is not before and bool(again.outcome.result.edits),
                            timeout=WAIT_MS)
            assert "dict='shapes-concepts'" in str(again.state.edits[0])
            assert "Error" not in again.banner.text(), again.banner.text()
        finally:
            again.close()
            again.deleteLater()
        gone = remote_window("no-such-concepts")  # remembered, but gone from the server: its one line
        try:
            qtbot.waitUntil(lambda: "Concepts not opened" in gone.banner.text(), timeout=WAIT_MS)
            said = gone.banner.text()
            assert "\n" not in said and "no-such-concepts" in said, said
            assert gone.concepts.state.opened is None
        finally:
            gone.close()
            gone.deleteLater()


def _pixels(widget) -> np.ndarray:
    """What `widget` shows on screen, as an (H, W, 4) uint8 array."""
    return _rgba(widget.grab())


def _panels_drawn(qtbot, window, layer: str) -> None:
    """Both tensor panels show `layer`'s capture, every detail (the enlarged channel, the histogram) drawn."""
    panels = (window.activation_panel, window.gradient_panel)
    qtbot.waitUntil(lambda: all(p.key.startswith(f"{layer}:") and p._pending is None for p in panels),
                    timeout=WAIT_MS)
    qtbot.wait(200)  # (the deferred repaints after the last detail)


def _ig(qtbot, window):
    found = []
    window.state.analysis.sigAttribution.connect(found.append)
    window.state.analysis.sigAttributionFailed.connect(found.append)
    assert window.state.analysis.request_attribution("ig", "", None, {"steps": 24, "metrics": ("deletion",)})
    qtbot.waitUntil(lambda: bool(found), timeout=WAIT_MS)
    assert not isinstance(found[0], str), found[0]
    return found[0]


def test_the_panels_and_an_ig_map_on_a_remote_engine_are_pixel_for_pixel_the_local_ones(qtbot, ui, open_window,
                                                                                      tmp_path):
    """The same run, the same window size: the activation and gradient panels (mosaic, colour bar, enlarged channel,
    histogram, statistics line) of the window on the engine are the local window's pixel for pixel, for the layer
    shown first and for a layer whose arrays were held on the engine until it was shown; the mosaic images' data
    too. An integrated-gradients map (a second method beside Grad-CAM) and its deletion curve, made on the engine,
    are the local ones exactly."""
    if not ui.has_demo():
        pytest.skip("the demo model's files are not installed")
    local = open_window(settings_=_settings(tmp_path / "local" / "inspector.ini"))
    with engine_server(tmp_path / "server") as (_process, url, token_file):
        with remote_window(qtbot, ui, url, token_file, tmp_path / "remote") as window:
            for w in (local, window):
                w.resize(1280, 800)
                _stats_done(qtbot, w)
            for layer in ("conv1", "relu3"):  # relu3: its arrays come from the engine when it is shown
                for w in (local, window):
                    w.state.select_layer(layer)
                    _panels_drawn(qtbot, w, layer)
                for name in ("activation_panel", "gradient_panel"):
                    here, there = getattr(local, name), getattr(window, name)
                    assert there.key == here.key
                    assert here.image.image is not None and here.image.image.size
                    np.testing.assert_array_equal(there.image.image, here.image.image, err_msg=f"{layer} {name}")
                    assert there.stats.text() == here.stats.text()
                    ours, theirs = _pixels(here), _pixels(there)
                    assert ours.shape == theirs.shape and ours[..., :3].std() > 0, f"{layer} {name}: nothing drawn"
                    np.testing.assert_array_equal(theirs, ours, err_msg=f"{layer} {name}: the pixels differ")
            here, there = _ig(qtbot, local), _ig(qtbot, window)
            assert (there.method, there.target_index) == (here.method, here.target_index) == ("ig",
                                                                                             here.target_index)
            np.testing.assert_array_equal(there.map, here.map)
            assert there.map.std() > 0
            assert there.completeness_gap == here.completeness_gap
            np.testing.assert_array_equal(there.baseline, here.baseline)
            assert [c.as_json() for c in there.curves] == [c.as_json() for c in here.curves] and there.curves
