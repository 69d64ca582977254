"""Issue 53: the remote worker's thread answers a request the window puts, and an event the engine sends, at once.
It read the connection with a 50 ms timeout and looked at the lanes only after it: a run went out 21 ms late on
median. Here an engine that says nothing for as long as the test lasts: a request must still go out."""

from __future__ import annotations

import queue
import threading

import pytest

from inspector.core.records.requests import ModelRequest
from inspector.gui.worker.remote import RemoteWorker
from inspector.protocol.messages import Message
from inspector.remote.errors import EngineError

DEMO = ModelRequest("demo")
SILENT_S = 30.0  # how long the engine below stays silent: far past any timeout of the worker's
WAIT_S = 5.0


class SilentEngine:
    """An `EngineClient` whose server says nothing until told to (`say`), or until the connection is closed."""

    hello = {"device": "cpu", "devices": [["cpu", "CPU"]]}

    def __init__(self) -> None:
        self.sent: queue.Queue = queue.Queue()
        self.reading = threading.Event()
        self._said: queue.Queue = queue.Queue()
        self._ids = iter(range(1, 1000))

    def next_event(self, timeout: float):
        self.reading.set()
        try:
            said = self._said.get(timeout=SILENT_S)  # the timeout asked for is not kept: a read that blocks
        except queue.Empty:
            return None
        if isinstance(said, Exception):
            raise said
        return said

    def send(self, kind: str, body=None, key: str | None = None) -> str:
        key = key or f"c{next(self._ids)}"
        self.sent.put((kind, body, key))
        return key

    def say(self, what) -> None:
        self._said.put(what)

    def close(self) -> None:
        self._said.put(EngineError("closed"))


@pytest.fixture
def served(qtbot, monkeypatch):
    """A RemoteWorker serving on a thread of its own, connected to a SilentEngine."""
    engine = SilentEngine()
    worker = RemoteWorker("ws://127.0.0.1:1")

    def connect():
        worker.hello = engine.hello
        return engine

    monkeypatch.setattr(worker, "_connect", connect)
    thread = threading.Thread(target=worker.serve, name="test-remote-worker", daemon=True)
    thread.start()
    assert engine.reading.wait(WAIT_S)  # connected, and reading
    yield worker, engine
    worker.stop()
    thread.join(WAIT_S)
    assert not thread.is_alive()


def test_a_request_put_goes_out_while_the_engine_says_nothing(served, qtbot):
    worker, engine = served
    worker.request_load(DEMO)
    kind, body, key = engine.sent.get(timeout=WAIT_S)  # (it waited for the read's SILENT_S before)
    assert (kind, body) == ("load", DEMO)
    with qtbot.waitSignal(worker.sigLoaded, timeout=int(WAIT_S * 1000)) as heard:
        engine.say(Message("result", key, "the model's info"))
    assert heard.args == ["the model's info"]


def test_a_cancel_goes_out_at_once_too(served):
    worker, engine = served
    key = worker.request_load(DEMO)
    server_key = engine.sent.get(timeout=WAIT_S)[2]
    assert worker.cancel(key)
    assert engine.sent.get(timeout=WAIT_S) == ("cancel", server_key, f"stop-{server_key}")


def test_a_connection_lost_is_said_at_once(served, qtbot):
    worker, engine = served
    with qtbot.waitSignal(worker.sigFailed, timeout=int(WAIT_S * 1000)) as failed:
        engine.say(EngineError("the engine went away"))
    assert failed.args[0].message == "Lost the engine at ws://127.0.0.1:1: the engine went away"
    assert worker.lost and "lost" in worker.where()


def _run_on_screen(worker, engine, qtbot, serves: list[str]):
    """A run sent, and its partial come and handed to the window: (the run's server id)."""
    from inspector.core.records.requests import RunRequest

    worker.hello = dict(engine.hello, serves=serves)
    worker.request_run(RunRequest(DEMO, "sample:star", visible=("conv1",), run_id=7))
    kind, _body, server_key = engine.sent.get(timeout=WAIT_S)
    assert kind == "run"
    with qtbot.waitSignal(worker.sigResult, timeout=int(WAIT_S * 1000)) as shown:
        engine.say(Message("partial", server_key, "the outcome as run"))
    assert shown.args == ["the outcome as run"]
    return server_key


def test_drawn_is_said_for_the_run_whose_panels_are_drawn(served, qtbot):
    """The window's result_drawn becomes the engine's `drawn` of the run in flight whose partial was shown, so the
    server starts the other layers' statistics now instead of beside the drawing (or DRAWN_WAIT_S later)."""
    worker, engine = served
    server_key = _run_on_screen(worker, engine, qtbot, ["run", "drawn", "cancel"])
    worker.result_drawn()
    assert engine.sent.get(timeout=WAIT_S) == ("drawn", server_key, f"drawn-{server_key}")


def test_a_server_that_reads_no_drawn_is_not_sent_one(served, qtbot):
    import queue as queues

    worker, engine = served
    _run_on_screen(worker, engine, qtbot, ["run", "cancel"])
    worker.result_drawn()
    worker.request_load(DEMO)  # what the worker sends next is this load, not a `drawn`
    assert engine.sent.get(timeout=WAIT_S)[0] == "load"
    with pytest.raises(queues.Empty):
        engine.sent.get(timeout=0.2)
