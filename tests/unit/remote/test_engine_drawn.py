"""Issue 53, the remote overhead: a run whose `partial` went out waits for its client's `drawn` (at most
DRAWN_WAIT_S) before the other layers' statistics start, as the app's own worker waits for its panels: on one
machine those statistics took the cores the client's decoding needed (8-11 ms for 4.5 ms of work)."""

from __future__ import annotations

import threading
import time

import pytest

from inspector.core.records.requests import ModelRequest, RunRequest
from inspector.core.runspec import RunSpec
from inspector.protocol.kinds import DRAWN_WAIT_S
from inspector.protocol.messages import Message
from inspector.remote.data_root import DataRoot
from inspector.remote.engine_thread import EngineThread, Session
from inspector.remote.jobs import Jobs


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    jobs = Jobs(DataRoot(tmp_path_factory.mktemp("root")))
    sent: list[Message] = []
    jobs.run("load", "l1", ModelRequest("demo"), threading.Event(), sent.append)
    assert sent[-1].kind == "result"
    return jobs


def _run(jobs, monkeypatch, on_partial):
    """A visible run of the demo: (seconds from its partial to the statistics' start, whether `drawn` was set then,
    the events sent)."""
    drawn, sent, seen = threading.Event(), [], {}
    finish = jobs.bench.finish

    def finishing(outcome, cancel=None):
        seen["finish"], seen["drawn"] = time.perf_counter(), drawn.is_set()
        return finish(outcome, cancel)

    def send(message):
        sent.append(message)
        if message.kind == "partial":
            seen["partial"] = time.perf_counter()
            on_partial(drawn)

    monkeypatch.setattr(jobs.bench, "finish", finishing)
    request = RunRequest(ModelRequest("demo"), "sample:star", spec=RunSpec.make(("conv1", "conv3")), run_id=1,
                         visible=("conv1",))
    jobs.run("run", "r1", request, threading.Event(), send, drawn=drawn)
    return seen["finish"] - seen["partial"], seen["drawn"], [m.kind for m in sent]


def test_the_statistics_start_once_the_client_says_drawn(jobs, monkeypatch):
    later = 0.2
    waited, drawn, kinds = _run(jobs, monkeypatch, lambda d: threading.Timer(later, d.set).start())
    assert drawn and waited >= later
    assert kinds[-1] == "result" and "partial" in kinds


def test_a_client_that_never_says_drawn_gets_them_after_the_wait(jobs, monkeypatch):
    waited, drawn, kinds = _run(jobs, monkeypatch, lambda d: None)
    assert not drawn and waited >= DRAWN_WAIT_S
    assert kinds[-1] == "result"


class _Jobs:
    def run(self, *args):
        pass


def test_drawn_names_the_running_run_and_a_cancel_or_a_close_ends_the_wait():
    engine, session = EngineThread(_Jobs()), Session(lambda message: None)
    session.running = ("r1", threading.Event())
    assert not engine.drawn(session, "r0") and not session.drawn.is_set()  # not the run on the engine
    assert engine.drawn(session, "r1") and session.drawn.is_set()
    session.drawn = threading.Event()
    assert engine.cancel(session, "r1") and session.drawn.is_set()  # stopped: no statistics to wait for
    session.drawn = threading.Event()
    engine.detach(session)
    assert session.drawn.is_set()
    session.running = None
    assert not engine.drawn(session, "r1")


def test_a_drawn_names_a_run_by_its_id():
    from inspector.protocol.errors import ProtocolError
    from inspector.protocol.schemas import check_body

    check_body("drawn", "r1")
    with pytest.raises(ProtocolError, match="^A drawn request's body is the id of the run whose panels are drawn.$"):
        check_body("drawn", {"id": "r1"})
