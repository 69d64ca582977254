"""Issue 52 item 1: a listener of a signal emitted off the GUI thread runs on the GUI thread, whatever it is.

Qt ran a plain callable (a lambda, pytest-qt's signal blocker) in the thread that emitted: the worker's. The
blocker then stopped its GUI-thread timer from the worker ("QObject::killTimer: Timers cannot be stopped from
another thread") and, once it was the worker that dropped the last reference, destroyed it there
("QObject::~QObject: ..."): an xdist worker crashed under load. The objects that emit off the GUI thread emit
private `_sigX` signals; their public `sigX` are emitted again on the GUI thread (gui_thread_signals)."""

from __future__ import annotations

import threading

from PySide6.QtCore import Signal

from inspector.gui.common.gui_thread_signals import face_class
from inspector.gui.state.live_feed import LiveFeed
from inspector.gui.worker.local import Worker, WorkerThread
from inspector.gui.worker.concepts import ConceptJobs
from inspector.gui.worker.graph import LayoutThread

OFF_THE_GUI_THREAD = (Worker, ConceptJobs, LayoutThread, LiveFeed)


def test_a_plain_callable_hears_the_workers_signals_on_the_gui_thread(qtbot, qtlog):
    heard = []
    worker_thread = WorkerThread(start=False)
    worker = worker_thread.worker
    worker.sigPhase.connect(lambda text: heard.append(("phase", text, threading.current_thread().name)))
    worker.sigEngineReady.connect(lambda devices: heard.append(("ready", "", threading.current_thread().name)))
    try:
        with qtbot.waitSignal(worker.sigEngineReady, timeout=120_000):  # its blocker is a plain Python object
            worker_thread.start()
        qtbot.waitUntil(lambda: len(heard) >= 3, timeout=10_000)
    finally:
        assert worker_thread.stop()
    # the engine's phase said, then cleared, then the devices: each heard on the GUI thread, in the order emitted
    assert [(what, text) for what, text, _ in heard] == [("phase", "Loading the engine (PyTorch)"), ("phase", ""),
                                                        ("ready", "")]
    assert {thread for _, _, thread in heard} == {threading.main_thread().name}
    assert not [r.message for r in qtlog.records if "another thread" in r.message]


def test_every_signal_emitted_off_the_gui_thread_is_private_and_heard_through_the_face():
    for cls in OFF_THE_GUI_THREAD:
        ours = [klass for klass in cls.__mro__ if klass.__module__.startswith("inspector.")]  # not QObject's own
        declared = {name for klass in ours for name, value in vars(klass).items() if isinstance(value, Signal)}
        assert declared and all(name.startswith("_") for name in declared), (cls.__name__, declared)
        face, names = face_class(cls)
        assert set(names) == {name[1:] for name in declared if name.startswith("_sig")}
        assert all(isinstance(vars(face)[name], Signal) for name in names)
