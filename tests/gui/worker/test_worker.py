"""The worker thread: latest request wins, stale results dropped, errors as messages, clean shutdown."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap

import pytest
import torch
from PySide6.QtCore import QThread

from inspector.core.engine.runner import RunSpec
from inspector.core.workbench import ModelRequest, RunRequest
from inspector.gui.worker.local import WorkerThread


def test_latest_wins_and_stale_results_are_dropped(ui, qtbot, open_window, slow_source, image_file):
    window = open_window(slow_source, image_file, ticks=ui.SLOW_TICKS)
    worker = window.worker
    runs = worker.runs_done
    received, shown = [], []
    worker.sigResult.connect(received.append)
    window.sigResultShown.connect(shown.append)

    with qtbot.waitSignal(worker.sigBusy, timeout=10_000, check_params_cb=lambda busy: busy):
        window.state.run()
    in_flight = window.state.last_run_id
    for _ in range(20):  # while the first run naps
        window.state.run()
    assert worker.pending() == 1
    latest = window.state.last_run_id
    assert latest == in_flight + 20

    qtbot.waitUntil(lambda: bool(shown), timeout=30_000)
    qtbot.wait(300)  # room for anything else that might still come
    assert worker.runs_done - runs == 2  # the run in flight, then only the latest
    assert [o.run_id for o in received] == [in_flight, latest]
    assert [o.run_id for o in shown] == [latest]  # the stale one was not drawn
    assert window.outcome.run_id == latest
    assert worker.pending() == 0


def test_garbage_is_collected_on_the_gui_thread_only(ui, qtbot, open_window, gui_files, image_file):
    """Cyclic garbage made on the worker is freed on the GUI thread: freeing Qt widgets on the
    worker (pyqtgraph's parentless menus in a collected cycle) deadlocked the app."""
    assert gc.isenabled()
    window = open_window(ui.source(gui_files, "Litter"), image_file)
    path = str((gui_files / "models.py").resolve())  # the loader runs the file as this module:
    code = sys.modules[f"_inspector_user_{abs(hash(path))}"]
    for _ in range(3):
        window.state.run()
        ui.expect_result(qtbot, window)
    qtbot.wait(600)  # the GUI-thread collector's timer
    assert code.DELETED_IN, "nothing collected the garbage"
    gc.collect()
    assert set(code.DELETED_IN) == {"MainThread"}
    assert len(code.DELETED_IN) >= 4  # the layer tree's run and every run since
    assert not gc.isenabled()  # while a worker thread exists, only the GUI thread collects
    window.close()
    assert gc.isenabled()


@pytest.fixture
def worker_thread():
    wt = WorkerThread()
    yield wt
    assert wt.stop()
    assert wt.thread.isFinished()


def request(model: str, input: str, layers=("fc",), run_id: int = 1) -> RunRequest:
    return RunRequest(ModelRequest(model), input, "cpu", RunSpec.make(layers), run_id=run_id)


def test_errors_come_back_as_sigfailed(qtbot, worker_thread, gui_files, tiny_source, image_file, ui):
    worker = worker_thread.worker
    missing = str(gui_files / "nowhere.py") + ":Net"
    with qtbot.waitSignal(worker.sigFailed, timeout=20_000) as failed:
        worker.request_load(ModelRequest(missing))
    (failure,) = failed.args
    assert (failure.what, failure.run_id, failure.cancelled, failure.kind) == ("load", 0, False, "ModelLoadError")
    assert "Python file not found" in failure.message and "nowhere.py" in failure.message

    with qtbot.waitSignal(worker.sigLoaded, timeout=20_000) as loaded:
        worker.request_load(ModelRequest(tiny_source))
    info = loaded.args[0]
    assert info.source == tiny_source
    assert not any(isinstance(v, torch.nn.Module) for v in vars(info).values())  # a record, not the module
    assert info.parameters_of("fc") == ["weight", "bias"]
    assert info.parameters_of("features.2") == []  # the in-place ReLU owns none
    assert dict(info.parameters)["features.0.weight"] == (8, 3, 3, 3)

    cases = [
        (request(tiny_source, str(gui_files / "broken.png"), run_id=5), "not an image"),
        (request(tiny_source, image_file, layers=("features.9",), run_id=6), "No layer named 'features.9'"),
        (request(ui.source(gui_files, "Fussy"), image_file, run_id=7), "The model raised ValueError"),
    ]
    for req, says in cases:
        with qtbot.waitSignal(worker.sigFailed, timeout=20_000) as failed:
            worker.request_run(req)
        (failure,) = failed.args
        assert failure.run_id == req.run_id and failure.cancelled is False and failure.what == "run"
        assert says in failure.message

    with qtbot.waitSignal(worker.sigResult, timeout=20_000) as result:
        worker.request_run(request(tiny_source, image_file, run_id=8))
    assert result.args[0].run_id == 8
    assert set(result.args[0].result.captures) == {"fc:output", "fc:grad_output"}


def test_an_unexpected_error_in_a_run_comes_back_with_its_traceback(qtbot, worker_thread, tiny_source, image_file,
                                                                     monkeypatch, capfd):
    """A bug below the worker (not an InspectorError) is a Failure with the traceback as details,
    printed to stderr too, and the worker goes on serving (it once died of a NameError here)."""
    import inspector.core.workbench as workbench

    worker = worker_thread.worker
    with qtbot.waitSignal(worker.sigResult, timeout=20_000):
        worker.request_run(request(tiny_source, image_file, run_id=1))

    def broken(self, *args, **kwargs):
        raise RuntimeError("a bug in the engine")

    with monkeypatch.context() as patch:
        patch.setattr(workbench.Workbench, "execute", broken)
        with qtbot.waitSignal(worker.sigFailed, timeout=20_000) as failed:
            worker.request_run(request(tiny_source, image_file, run_id=2))
    (failure,) = failed.args
    assert (failure.what, failure.run_id, failure.kind) == ("run", 2, "RuntimeError")
    assert "a bug in the engine" in failure.message
    assert "Traceback" in failure.details and 'raise RuntimeError("a bug in the engine")' in failure.details
    assert "RuntimeError: a bug in the engine" in capfd.readouterr().err
    with qtbot.waitSignal(worker.sigResult, timeout=20_000) as result:
        worker.request_run(request(tiny_source, image_file, run_id=3))
    assert result.args[0].run_id == 3


def test_leak_checker_sees_a_running_qthread(ui, qapp):
    before = ui.snapshot()
    thread = QThread()
    thread.start()
    try:
        assert any("QThread" in p and "still running" in p for p in ui.find_leaks(before))
    finally:
        thread.quit()
        assert thread.wait(5000)
    assert ui.find_leaks(before) == []


CLOSE_MID_RUN = textwrap.dedent("""
    import sys
    from PySide6.QtCore import QObject, QSettings, QTimer, Slot
    from PySide6.QtWidgets import QApplication

    app = QApplication([])
    from inspector.gui.window.main_window import MainWindow

    ini, source, image = sys.argv[1:4]
    settings = QSettings(ini, QSettings.IniFormat)
    settings.setValue("model/source", source)
    settings.setValue("input", image)
    settings.setValue("ticks/" + source, '["conv", "naps.0", "naps.1", "naps.2", "naps.3", "fc"]')
    window = MainWindow(settings=settings, ask_trust=lambda _name, _what: True)
    window.auto_run.setChecked(False)
    window.show()


    class Driver(QObject):  # lives in the GUI thread, so the worker's signals reach it queued
        busy = False

        @Slot(bool)
        def on_busy(self, busy):
            self.busy = busy

        def start_when_loaded(self):  # the load may finish before anyone could connect to sigLoaded
            if window.loaded is None:
                QTimer.singleShot(20, self.start_when_loaded)
                return
            window.state.run()
            QTimer.singleShot(300, self.close)

        def close(self):
            print("busy at close:", self.busy, flush=True)
            window.close()
            print("worker finished:", window.worker_thread.thread.isFinished(), flush=True)
            app.quit()


    driver = Driver()
    window.worker.sigBusy.connect(driver.on_busy)
    driver.start_when_loaded()
    QTimer.singleShot(120_000, lambda: app.exit(3))
    sys.exit(app.exec())
""")


def test_closing_mid_run_in_a_real_process_exits_cleanly(tmp_path, slow_source, image_file):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run(
        [sys.executable, "-c", CLOSE_MID_RUN, str(tmp_path / "s.ini"), slow_source, image_file],
        capture_output=True, text=True, timeout=240, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "busy at close: True" in proc.stdout
    assert "worker finished: True" in proc.stdout
    assert "QThread: Destroyed while thread is still running" not in proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]


def test_what_imports_created_is_frozen_out_of_the_collector(monkeypatch):
    """A full collection walked ~390k import-time objects (~190 ms GUI stalls); frozen, it skips them."""
    import types

    from inspector.gui.common import gc_collector

    monkeypatch.setattr(gc_collector, "_frozen_at", 0)
    gc.unfreeze()
    junk = [[i] for i in range(50_000)]  # stands in for what an import leaves behind
    assert gc_collector.freeze_imports()
    frozen = gc.get_freeze_count()
    assert frozen >= 50_000
    assert not gc_collector.freeze_imports()  # nothing new imported: nothing to do
    monkeypatch.setitem(sys.modules, "inspector_test_fake_import", types.ModuleType("inspector_test_fake_import"))
    more = [[i] for i in range(1000)]
    assert gc_collector.freeze_imports()
    assert gc.get_freeze_count() >= frozen + 1000
    del junk, more
