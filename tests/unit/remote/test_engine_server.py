"""Issue 53: `network-inspector serve` as a real process on 127.0.0.1, driven by the real client: hello, devices,
a load and a run equal to the same work in process (arrays bit for bit), progress, cancel, latest wins per lane,
two clients at once, a client killed mid-run, Ctrl-C. One server for the module; every wait bounded."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import replace

import numpy as np
import pytest

from inspector.core.records.requests import AttributionRequest, ModelRequest, RunRequest
from inspector.protocol import VERSION
from inspector.remote.client import value_of
from inspector.remote.errors import EngineCancelled

DEMO = ModelRequest("demo")
EDIT = "relu1:grad_input=clamp(min=0)"
#: An attribution that takes seconds on the demo (integrated gradients, 5000 points): what is cancelled here.
SLOW = AttributionRequest(DEMO, "sample:star", method="ig", options=(("steps", 5000),), run_id=9)


def run_request(run_id: int = 1, edits=(EDIT,), layers=("conv1", "relu1", "fc"), baseline=True) -> RunRequest:
    from inspector.core.runspec import RunSpec

    spec = RunSpec.make(list(layers), ["output", "grad_output"], list(edits))
    return RunRequest(DEMO, "sample:star", "cpu", spec, baseline=baseline, analyse=True, run_id=run_id)


@pytest.fixture(scope="module")
def served(remote, tmp_path_factory):
    with remote.engine_server(tmp_path_factory.mktemp("served")) as server:
        yield server


@pytest.fixture(scope="module")
def bench():
    from inspector.core.workbench import Workbench

    return Workbench()


def until_first(events, kind: str) -> list:
    """The events up to and including the first of `kind` (the iterator's own waits are bounded)."""
    seen = []
    for event in events:
        seen.append(event)
        if event.kind == kind:
            return seen
    raise AssertionError(f"no {kind} event among {[e.kind for e in seen]}")


def same_result(ours, theirs) -> None:
    """Two RunResults equal in what a run computes (timings and the hook log's times aside)."""
    assert list(ours.captures) == list(theirs.captures)
    for key, capture in ours.captures.items():
        other = theirs.captures[key]
        assert capture.key == other.key and capture.stats == other.stats, key
        np.testing.assert_array_equal(capture.array, other.array, err_msg=key, strict=True)
    for name in ("input", "output", "input_grad"):
        a, b = getattr(ours, name), getattr(theirs, name)
        assert (a is None) == (b is None), name
        if a is not None:
            np.testing.assert_array_equal(a, b, err_msg=name, strict=True)
    assert ours.predictions == theirs.predictions
    assert (ours.target, ours.target_index, ours.objective, ours.edits, ours.device) == \
        (theirs.target, theirs.target_index, theirs.objective, theirs.edits, theirs.device)


def test_hello_says_the_protocol_the_devices_and_the_limits(served):
    assert served.line.startswith("serving ws://127.0.0.1:") and "token in" in served.line
    assert str(served.root) in served.line
    with served.client() as engine:
        hello = engine.hello
    assert hello["protocol"] == VERSION and hello["version"]
    assert hello["devices"][0] == ["cpu", "CPU"] and hello["device"] == "cpu"
    assert hello["limits"]["max_message"] == 64 * 2**20 and hello["limits"]["rate"] == 50
    assert set(hello["serves"]) == {"devices", "cancel", "drawn", "arrays", "load", "run", "capture", "attribute", "atlas",
                                    "graph", "values", "concepts", "learn", "catalogue", "checks", "evaluate", "list",
                                    "summary"}
    assert hello["trusted"] is False


def test_devices_are_the_servers(served):
    from inspector.core.sources.devices import available_devices

    with served.client() as engine:
        events = list(engine.request("devices"))
    assert [e.kind for e in events] == ["accepted", "result"]
    assert events[-1].body == [[d.name, d.description] for d in available_devices()]


def test_a_load_gives_the_model_info_describe_gives_in_process(served, bench):
    from inspector.core.model_info import describe

    with served.client() as engine:
        info = engine.call("load", DEMO)
    loaded, tree = bench.load(DEMO)
    assert info == describe(loaded, tree, DEMO)


def test_a_run_gives_the_outcome_a_workbench_gives_in_process(served, bench):
    request = run_request(run_id=4)
    with served.client() as engine:
        events = list(engine.request("run", request))
    kinds = [e.kind for e in events]
    assert kinds[0] == "accepted" and kinds[-1] == "result" and "progress" in kinds
    assert {e.id for e in events} == {events[0].id}
    progress = [e.body for e in events if e.kind == "progress"]
    assert progress[-1]["done"] == progress[-1]["total"] == 2 and all(p["rate"] >= 0 for p in progress)
    outcome = events[-1].body
    here = bench.execute(request)
    if not here.complete or here.analysis is None:
        bench.finish(here).apply(here)
    assert outcome.run_id == 4 and outcome.complete
    same_result(outcome.result, here.result)
    same_result(outcome.baseline, here.baseline)
    assert outcome.analysis == here.analysis
    assert "relu1:grad_output" in outcome.result.captures  # the edit's layer, captured and edited
    assert outcome.result.edits == [EDIT]


def test_a_run_of_the_visible_layers_comes_first_then_every_statistic(served):
    request = replace(run_request(run_id=7), visible=("conv1",))
    with served.client() as engine:
        events = list(engine.request("run", request))
    assert [e.kind for e in events if e.kind in ("partial", "result")] == ["partial", "result"]
    first, last = events[[e.kind for e in events].index("partial")].body, events[-1].body
    assert first.result.captures["conv1:output"].stats is not None and not first.complete
    assert first.analysis is None and last.analysis is not None and last.complete
    same_result(first.result, replace(last.result, captures={
        k: replace(c, stats=c.stats if k.startswith("conv1:") else None) for k, c in last.result.captures.items()}))


def test_only_the_visible_layers_arrays_cross_and_the_others_come_when_asked(served, bench):
    """Issue 53 item 5: with conv1 visible, the outcome sent holds conv1's arrays and every statistic; the other
    captures' arrays (the result's and the baseline's) come by an `arrays` request, bit for bit a Workbench's."""
    from inspector.remote.errors import EngineError

    request = replace(run_request(run_id=9), visible=("conv1",))
    with served.client() as engine:
        sent = engine.call("run", request)
        here = bench.execute(request)
        bench.finish(here).apply(here)
        others = [n for n in here.result.captures if not n.startswith("conv1:")]
        assert others and set(sent.result.held) == set(others) and set(sent.baseline.held) == set(others)
        for name, capture in sent.result.captures.items():
            assert capture.stats == here.result.captures[name].stats
            assert (capture.array is None) == (name in others)
        np.testing.assert_array_equal(sent.result.captures["conv1:output"].array,
                                      here.result.captures["conv1:output"].array)
        came = engine.call("arrays", {"run": 9, "names": [others[0], "baseline/" + others[1], "nope:output"]})
        assert set(came) == {others[0], "baseline/" + others[1]}
        assert came[others[0]].tobytes() == here.result.captures[others[0]].array.tobytes()
        assert came["baseline/" + others[1]].tobytes() == here.baseline.captures[others[1]].array.tobytes()
        with pytest.raises(EngineError, match=r"^Run 8's arrays are no longer held: this connection keeps its last "
                                              r"run's \(run 9\)\.$"):
            engine.call("arrays", {"run": 8, "names": [others[0]]})


def test_a_capture_gives_the_whole_result(served, bench):
    request = run_request(run_id=5, baseline=False)
    with served.client() as engine:
        result = engine.call("capture", request)
    same_result(result, bench.execute(request).result)
    assert all(c.array is not None and c.stats is not None for c in result.captures.values())


def test_an_atlas_built_opened_and_its_pictures_are_those_made_in_process(served, tmp_path):
    from PIL import Image

    from inspector.core.atlas import run_atlas
    from inspector.core.atlas.pictures import open_atlas, top_pictures
    from inspector.core.records.requests import AtlasRequest
    from inspector.core.sources.loader import load_model

    rng = np.random.default_rng(53)
    images = served.root / "images"
    images.mkdir()
    for i in range(5):
        Image.fromarray(rng.integers(0, 255, (40, 48, 3), dtype=np.uint8)).save(images / f"{i}.png")
    build = AtlasRequest("build", "atlas", DEMO, "images", ("conv1",), top=2, batch=2)
    with served.client() as engine:
        events = list(engine.request("atlas", build))
        opened = events[-1].body
        pictures = engine.call("atlas", AtlasRequest("pictures", "atlas", layer="conv1", channel=3))
        assert engine.call("atlas", AtlasRequest("open", "atlas")) == opened
    assert events[-1].kind == "result" and any(e.kind == "progress" for e in events)
    run_atlas(load_model("demo"), images, "conv1", 2, tmp_path / "here", batch=2)
    here = open_atlas(tmp_path / "here")
    assert opened.layers() == here.layers() == ["conv1"] and opened.channels("conv1") == here.channels("conv1")
    assert opened.atlas["layers"] == here.atlas["layers"]
    expected = top_pictures(here, "conv1", 3)
    assert [(p.rank, p.image, p.score, p.y, p.x, p.box) for p in pictures] == \
        [(p.rank, p.image, p.score, p.y, p.x, p.box) for p in expected]
    for ours, theirs in zip(pictures, expected):
        np.testing.assert_array_equal(ours.rgb, theirs.rgb, strict=True)


def test_cancel_stops_the_waiting_request_and_the_running_one(served):
    with served.client() as engine:
        slow = engine.send("attribute", SLOW)
        started = time.monotonic()
        assert any(e.kind == "progress" for e in until_first(engine.events(slow), "progress"))
        waiting = engine.send("run", run_request(run_id=6))
        assert engine.cancel(waiting) is True
        assert [e.kind for e in engine.events(waiting)] == ["accepted", "cancelled"]
        assert engine.cancel(slow) is True
        last = list(engine.events(slow))[-1]
        assert last.kind == "cancelled", last
        assert time.monotonic() - started < 5.0  # stopped within a pass, not after 5000 points
        assert engine.cancel("no-such-request") is False
        assert engine.call("devices")  # the connection serves on


def test_latest_wins_in_a_lane(served):
    with served.client() as engine:
        slow = engine.send("attribute", SLOW)
        until_first(engine.events(slow), "progress")  # the engine is busy: the runs below wait
        first = engine.send("run", run_request(run_id=10))
        second = engine.send("run", run_request(run_id=11, edits=()))
        engine.cancel(slow)
        first_events = [e.kind for e in engine.events(first)]
        assert first_events == ["accepted", "cancelled"]
        outcome = value_of(list(engine.events(second))[-1])
        assert outcome.run_id == 11 and outcome.result.edits == []
        with pytest.raises(EngineCancelled):
            value_of(list(engine.events(slow))[-1])


def test_two_clients_at_once_get_their_own_results(served):
    with served.client() as one, served.client() as two:
        a = one.send("run", run_request(run_id=21))
        b = two.send("run", run_request(run_id=22, edits=()))
        c = one.send("devices")
        got_b = list(two.events(b))
        got_a = list(one.events(a))
        assert got_a[-1].body.run_id == 21 and got_a[-1].body.result.edits == [EDIT]
        assert got_b[-1].body.run_id == 22 and got_b[-1].body.result.edits == []
        assert list(one.events(c))[-1].kind == "result"


def test_a_client_killed_mid_run_leaves_the_server_to_the_next(served):
    script = textwrap.dedent(f"""
        import sys
        from inspector.core.records.requests import AttributionRequest, ModelRequest
        from inspector.remote.client import EngineClient
        engine = EngineClient({served.url!r}, {served.token!r}, timeout=30)
        key = engine.send("attribute", AttributionRequest(ModelRequest("demo"), "sample:star", method="ig",
                                                          options=(("steps", 5000),)))
        for event in engine.events(key):
            if event.kind == "progress":
                print("running", flush=True)
                break
        sys.stdin.readline()
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    try:
        deadline = time.monotonic() + 30
        line = ""
        while not line and time.monotonic() < deadline and child.poll() is None:
            line = child.stdout.readline()
        assert line.strip() == "running"
    finally:
        child.kill()
        child.wait(10)
        child.stdout.close()
        child.stdin.close()
    started = time.monotonic()
    with served.client() as engine:
        outcome = engine.call("run", run_request(run_id=31), timeout=20)
    assert outcome.run_id == 31
    assert time.monotonic() - started < 5.0  # the dead client's attribution was stopped, not run to its end
    assert served.process.poll() is None


def test_ctrl_c_stops_the_server_cleanly(remote, tmp_path):
    with remote.engine_server(tmp_path) as server:
        with server.client() as engine:
            assert engine.call("devices")
        code = remote.stop(server.process, signal.SIGINT)
    assert code in (0, 130)
    assert "Traceback" not in server.stderr.read_text()


def test_the_docs_example_runs_against_the_server(served, monkeypatch, capsys):
    from pathlib import Path

    page = (Path(__file__).resolve().parents[3] / "docs" / "tasks" / "remote.md").read_text(encoding="utf-8")
    code = page.split("```python\n", 1)[1].split("```", 1)[0]
    assert "ws://127.0.0.1:8765" in code
    monkeypatch.setenv("NETWORK_INSPECTOR_TOKEN", served.token)  # the page's client reads it, else the token file
    exec(compile(code.replace("ws://127.0.0.1:8765", served.url), "docs/tasks/remote.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "[['cpu', 'CPU']]" and printed[1] == "accepted" and printed[-2] == "result"
    assert printed[-1].startswith("(1, 16, 64, 64) ")
