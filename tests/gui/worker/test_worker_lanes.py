"""Issue 53 item 1: the worker's requests wait in one mailbox of lanes (`inspector.protocol.lanes.Lanes`), one per
lane, latest wins; a model's load drops the run waiting for the model before; every request has an id and
`cancel(id)` drops only that request (or stops only it, when it is the one in flight).

The requests are put while the engine is still loading (the worker takes none before it has a workbench), so what
waits is known exactly, whatever the machine's load."""

from __future__ import annotations

import pytest

from inspector.core.engine.runner import RunSpec
from inspector.core.workbench import ModelRequest, RunRequest
from inspector.gui.worker.local import WorkerThread
from inspector.gui.worker.graph import GraphDrawn, GraphRequest

ENGINE_MS = 120_000
WAIT_MS = 60_000


@pytest.fixture
def unstarted():
    wt = WorkerThread(start=False)
    yield wt
    assert wt.stop()
    assert wt.thread.isFinished()


def run_of(model: str, input: str, run_id: int, layers=("fc",)) -> RunRequest:
    return RunRequest(ModelRequest(model), input, "cpu", RunSpec.make(layers), run_id=run_id)


def heard(worker) -> dict[str, list]:
    got: dict[str, list] = {"loaded": [], "result": [], "failed": [], "graph": [], "busy": []}
    worker.sigLoaded.connect(got["loaded"].append)
    worker.sigResult.connect(got["result"].append)
    worker.sigFailed.connect(got["failed"].append)
    worker.sigAnswer.connect(lambda lane, run_id, drawn: got["graph"].append((run_id, drawn)) if lane == "graph"
                             else None)
    worker.sigBusy.connect(got["busy"].append)
    return got


def idle(qtbot, got, turns: int = 1) -> None:
    """Wait (bounded) until the worker said it was busy and then idle `turns` times."""
    qtbot.waitUntil(lambda: got["busy"].count(False) >= turns, timeout=WAIT_MS)


def test_a_load_drops_the_waiting_run(qtbot, unstarted, tiny_source, slow_source, image_file):
    worker = unstarted.worker
    got = heard(worker)
    run = worker.request_run(run_of(slow_source, image_file, 1))  # the run for the model before
    assert worker.pending() == 1
    load = worker.request_load(ModelRequest(tiny_source))
    assert run != load
    assert worker.pending() == 1  # the load waits; the run was dropped
    assert not worker.cancel(run)  # it no longer waits
    unstarted.start()
    qtbot.waitUntil(lambda: bool(got["loaded"]), timeout=ENGINE_MS)
    idle(qtbot, got)
    qtbot.wait(200)  # room for anything else that might still come
    assert [info.source for info in got["loaded"]] == [tiny_source]
    assert got["result"] == [] and got["failed"] == [] and worker.runs_done == 0
    assert worker.pending() == 0

    worker.request_run(run_of(tiny_source, image_file, 2))  # the model loaded runs
    qtbot.waitUntil(lambda: bool(got["result"]), timeout=WAIT_MS)
    assert [o.run_id for o in got["result"]] == [2]


def test_a_load_that_fails_drops_the_run_put_after_it(qtbot, unstarted, gui_files, image_file):
    worker = unstarted.worker
    got = heard(worker)
    missing = str(gui_files / "nowhere.py") + ":Net"
    worker.request_load(ModelRequest(missing))
    worker.request_run(run_of(missing, image_file, 3))  # put after the load: it waits beside it
    assert worker.pending() == 2
    unstarted.start()
    qtbot.waitUntil(lambda: bool(got["failed"]), timeout=ENGINE_MS)
    idle(qtbot, got)
    qtbot.wait(200)
    assert [(f.what, f.run_id) for f in got["failed"]] == [("load", 0)]  # the run was not tried
    assert got["result"] == [] and worker.runs_done == 0


def test_cancel_by_id_drops_only_that_request(qtbot, unstarted, tiny_source, image_file):
    worker = unstarted.worker
    got = heard(worker)
    worker.request_load(ModelRequest(tiny_source))
    run = worker.request_run(run_of(tiny_source, image_file, 4))
    graph = worker.request_graph(GraphRequest(ModelRequest(tiny_source), image_file, 9))
    assert len({run, graph}) == 2
    assert worker.cancel(graph)
    assert not worker.cancel(graph)  # dropped already
    assert not worker.cancel("no-such-request")
    assert worker.pending() == 2  # the load and the run still wait
    unstarted.start()
    qtbot.waitUntil(lambda: bool(got["result"]), timeout=ENGINE_MS)
    idle(qtbot, got)
    qtbot.wait(200)
    assert [o.run_id for o in got["result"]] == [4]
    assert got["graph"] == [] and got["failed"] == []


def test_cancel_by_id_of_a_waiting_run_leaves_the_graph(qtbot, unstarted, tiny_source, image_file):
    worker = unstarted.worker
    got = heard(worker)
    worker.request_load(ModelRequest(tiny_source))
    worker.request_run(run_of(tiny_source, image_file, 5))
    run = worker.request_run(run_of(tiny_source, image_file, 6))  # replaces 5
    worker.request_graph(GraphRequest(ModelRequest(tiny_source), image_file, 10))
    assert worker.cancel(run)
    assert worker.pending() == 1  # the load
    unstarted.start()
    qtbot.waitUntil(lambda: bool(got["graph"]), timeout=ENGINE_MS)
    idle(qtbot, got)
    qtbot.wait(200)
    ((graph_id, drawn),) = got["graph"]
    assert graph_id == 10 and isinstance(drawn, GraphDrawn)
    assert got["result"] == [] and got["failed"] == [] and worker.runs_done == 0


def test_cancel_by_id_of_the_request_in_flight_stops_only_it(qtbot, unstarted, slow_source, image_file, ui):
    worker = unstarted.worker
    got = heard(worker)
    worker.request_load(ModelRequest(slow_source))
    unstarted.start()
    qtbot.waitUntil(lambda: bool(got["loaded"]), timeout=ENGINE_MS)
    idle(qtbot, got)
    got["busy"].clear()
    run = worker.request_run(run_of(slow_source, image_file, 7, layers=tuple(sorted(ui.SLOW_TICKS))))
    qtbot.waitUntil(lambda: worker._current == run, timeout=WAIT_MS)  # it naps 0.8 s
    worker.request_graph(GraphRequest(ModelRequest(slow_source), image_file, 11))  # waits behind it
    assert worker.cancel(run)
    qtbot.waitUntil(lambda: bool(got["graph"]), timeout=WAIT_MS)
    idle(qtbot, got)
    assert [(f.what, f.run_id, f.cancelled) for f in got["failed"]] == [("run", 7, True)]
    assert got["result"] == []
    ((graph_id, drawn),) = got["graph"]
    assert graph_id == 11 and isinstance(drawn, GraphDrawn)  # not cancelled with the run


def test_cancel_by_id_of_a_request_taken_for_this_turn_but_not_started(qtbot, unstarted, slow_source, image_file,
                                                                        ui):
    """The load, the run and the graph are taken in one turn; the graph, behind the run, is cancelled while the run
    naps: it never starts, and the run is not stopped."""
    worker = unstarted.worker
    got = heard(worker)
    worker.request_load(ModelRequest(slow_source))
    run = worker.request_run(run_of(slow_source, image_file, 8, layers=tuple(sorted(ui.SLOW_TICKS))))
    graph = worker.request_graph(GraphRequest(ModelRequest(slow_source), image_file, 12))
    unstarted.start()
    qtbot.waitUntil(lambda: worker._current == run, timeout=ENGINE_MS)
    assert len(worker._lanes) == 0  # taken: it waits in no lane
    assert worker.cancel(graph)
    assert not worker.cancel(graph)
    idle(qtbot, got)
    qtbot.wait(200)
    assert [o.run_id for o in got["result"]] == [8]
    assert got["graph"] == [] and got["failed"] == []


def test_the_catalogue_comes_back_as_an_answer_of_its_lane_and_reaches_the_state(qtbot, window):
    """Every lane's result comes back through the worker's one answer signal (lane, run id, value); the state
    hands the catalogue's on as ever (sigCatalogue)."""
    answers, offered = [], []
    window.worker.sigAnswer.connect(lambda lane, run_id, found: answers.append((lane, run_id)))
    window.state.sigCatalogue.connect(offered.append)
    window.state.request_catalogue()
    qtbot.waitUntil(lambda: bool(offered), timeout=WAIT_MS)
    assert answers == [("catalogue", 0)]
    assert "resnet18" in offered[0]
