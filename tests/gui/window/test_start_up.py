"""The start-up stall (issue 25, item 15): what the GUI thread must not wait for while the app starts.

Measured by `network-inspector bench --gui` (row (i)); these tests hold the causes it found:
the engine's libraries loading during the window's first paint, the collector walking what the worker
imports, the first result's panels drawn three times in one turn, and torchvision (which imports
torch._dynamo, ~1 s) imported with the engine."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import time

import pytest
from PySide6.QtCore import QEvent, QObject, Qt

from inspector.gui.common import gc_collector
from inspector.gui.views.tensor_panel import TensorPanel


def test_a_new_result_draws_each_panel_once(open_window, tiny_source, image_file, monkeypatch):
    """A result that selects the layer (the first one) drew the activations twice and the gradients twice,
    all in the result's first turn; now each panel once, the gradients a turn later, as for any result."""
    drawn = []
    show = TensorPanel.show_capture

    def counting(panel, key, array, stats, details=True):
        drawn.append((panel, key, array))
        return show(panel, key, array, stats, details)

    monkeypatch.setattr(TensorPanel, "show_capture", counting)
    window = open_window(tiny_source, image_file)
    captures = window.first_outcome.result.captures
    layer = window.state.layer
    assert layer is not None and window.layer_combo.currentData() == layer
    act, grad = window.state.panel_keys(layer)
    assert [(panel, key) for panel, key, _ in drawn] == [(window.activation_panel, act), (window.gradient_panel, grad)]
    assert drawn[0][2] is captures[act].array and drawn[1][2] is captures[grad].array


def test_the_engine_loads_after_the_first_paint(qtbot, settings, ui):
    """Loading torch's libraries holds the dynamic loader's lock, which the first paint needs too."""
    from inspector.gui.window.main_window import MainWindow

    times = {}

    class FirstPaint(QObject):
        def eventFilter(self, watched, event):  # noqa: N802 - Qt's name
            if event.type() == QEvent.Paint:
                times.setdefault("paint", time.perf_counter())
            return False

    window = MainWindow(settings=settings, ask_trust=lambda _n, _w: True, engine_after_paint=True)
    thread = window.worker_thread.thread
    thread.started.connect(lambda: times.setdefault("engine", time.perf_counter()), Qt.DirectConnection)
    spy = FirstPaint()
    window.installEventFilter(spy)
    try:
        assert not thread.isRunning()
        window.show()
        qtbot.waitUntil(lambda: "engine" in times, timeout=5000)
        assert times["paint"] < times["engine"]
        ui.expect_result(qtbot, window)  # the requests made before the engine started were taken up
    finally:
        window.removeEventFilter(spy)
        window.close()
        window.deleteLater()


def test_a_window_never_painted_still_loads_its_engine_and_a_closed_one_never(qtbot, settings, ui):
    from inspector.gui.window.main_window import MainWindow

    hidden = MainWindow(settings=settings, ask_trust=lambda _n, _w: True, engine_after_paint=True)
    closed = MainWindow(settings=settings, ask_trust=lambda _n, _w: True, engine_after_paint=True)
    closed.close()  # before its first paint: the fallback must not start a thread after this
    try:
        qtbot.waitUntil(hidden.worker_thread.thread.isRunning, timeout=5000)  # the 1 s fallback
        qtbot.wait(300)
        assert not closed.worker_thread.thread.isRunning() and not closed.worker_thread.thread.isFinished()
    finally:
        hidden.close()
        for window in (hidden, closed):
            window.deleteLater()


def test_while_modules_are_imported_the_collector_freezes_instead_of_walking(qapp, monkeypatch):
    """A generation 1 collection during the worker's imports walked all of them: 94-118 ms on the GUI thread."""
    collected = []

    def on_gc(phase, info):
        if phase == "start":
            collected.append(info["generation"])

    collector = gc_collector.GuiThreadCollector(interval_ms=250, importing_ms=50)
    gc.callbacks.append(on_gc)
    try:
        monkeypatch.setattr(gc_collector, "_frozen_at", len(sys.modules))
        monkeypatch.setitem(sys.modules, "inspector_test_importing", type(sys)("inspector_test_importing"))
        junk = [[i] for i in range(20_000)]  # what the import made so far, all in generation 0
        gc.collect(0)  # ... now in generation 1, which is due
        gc.set_threshold(1, 1, 1_000_000)
        for _ in range(3):
            [[i] for i in range(100)]
        frozen = gc.get_freeze_count()
        collected.clear()
        collector.collect()
        assert collected == [0]  # the youngest only: generation 1 (20,000 objects here) was not walked
        assert gc.get_freeze_count() >= frozen + 20_000 and collector.timer.interval() == 50
        for _ in range(2):  # generation 1 due again, and some new objects
            [[i] for i in range(100)]
            gc.collect(0)
        keep = [[i] for i in range(100)]
        collected.clear()
        collector.collect()  # nothing imported since: the usual collection, the usual pace
        assert collected == [1] and collector.timer.interval() == 250
        del junk, keep
    finally:
        gc.set_threshold(700, 10, 10)
        gc.callbacks.remove(on_gc)
        collector.stop()


def test_the_engine_does_not_import_torchvision():
    """torchvision imports torch._dynamo, inductor, sympy and triton (~1 s of the start, and GIL holds of
    40-50 ms): the engine imports it only when a box's IoU is needed."""
    code = ("import sys, json\n"
            "import inspector.core.workbench, inspector.core.sources.devices\n"
            "from inspector.core.detection.overlap import box_iou\n"
            "import torch\n"
            "before = 'torchvision' in sys.modules\n"
            "iou = box_iou(torch.tensor([[0., 0., 2., 2.]]), torch.tensor([[1., 1., 3., 3.], [0., 0., 2., 2.]]))\n"
            "print(json.dumps([before, iou.double().tolist()]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    before, iou = json.loads(out.stdout.strip().splitlines()[-1])
    assert before is False
    assert iou[0] == pytest.approx([1 / 7, 1.0], rel=1e-6)  # overlap 1, union 4 + 4 - 1
