"""Issue 53: the Graph tab's requests on `network-inspector serve` (a real process on 127.0.0.1, the real client):
the graph of the loaded model recorded and laid out there equals the one recorded here (nodes, edges, groups,
layout), one run's values and two runs compared on it equal the in-process ones, a graph of a model the engine
does not hold is refused in one line, and `EngineClient.next_event` reads the events of requests in flight
together, whoever they are for. One server for the module; every wait bounded."""

from __future__ import annotations

import time

import pytest

from inspector.core.records.graph import GraphRecorded, GraphRequest, GraphValuesRequest
from inspector.core.records.requests import ModelRequest
from inspector.remote.client import TERMINAL
from inspector.remote.errors import EngineError

# the same numbers need the same arithmetic: the server's one thread here too (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("threads_as_the_server")


@pytest.fixture(scope="module")
def served(remote, tmp_path_factory):
    with remote.engine_server(tmp_path_factory.mktemp("graph")) as server:
        yield server


@pytest.fixture(scope="module")
def engine(served):
    with served.client() as client:
        info = client.call("load", ModelRequest("demo"))
        yield client, info


@pytest.fixture(scope="module")
def local():
    from inspector.core import load_input, load_model

    loaded = load_model("demo")
    return loaded, load_input("sample:star", loaded.preprocess, loaded.input_shape)


def test_the_engines_graph_and_layout_are_the_ones_recorded_here(engine, local):
    from inspector.core.graph import record_graph
    from inspector.core.graph.layout.graph_layout import GraphLayout

    client, info = engine
    recorded = client.call("graph", GraphRequest(info.request, "sample:star", 11))
    graph = record_graph(*local)
    assert type(recorded) is GraphRecorded and recorded.run_id == 11
    assert recorded.input_shape == tuple(local[1].shape) == (1, 3, 64, 64)
    assert [n.id for n in recorded.graph.nodes] == [n.id for n in graph.nodes]
    assert "conv1" in [n.id for n in graph.nodes] and len(graph.edges) > 10
    assert [(e.source, e.target, e.shape, e.key) for e in recorded.graph.edges] == \
        [(e.source, e.target, e.shape, e.key) for e in graph.edges]
    assert recorded.graph == graph and recorded.graph.groups == graph.groups
    assert recorded.layout == GraphLayout(graph).layout()  # every top-level group closed, the same boxes
    # the client lays out the next views itself, from the graph: what it opens is what a local layout opens
    opened = [g.id for g in graph.groups]
    assert GraphLayout(recorded.graph).layout(opened) == GraphLayout(graph).layout(opened)


def test_leaves_are_recorded_as_one_node_each(engine, local):
    from inspector.core.graph import record_graph

    client, info = engine
    recorded = client.call("graph", GraphRequest(info.request, "", leaves=("block",), layout=False))
    x = local[0].example_input()
    graph = record_graph(local[0], x, leaves=("block",))
    assert recorded.layout is None and recorded.graph == graph and recorded.input_shape == tuple(x.shape)
    assert "block" in [n.id for n in graph.nodes]


def test_a_runs_values_and_edits_compared_on_the_graph_equal_the_in_process_ones(engine, local):
    from inspector.core.edits import parse_edit
    from inspector.core.graph import record_graph
    from inspector.core.graph.values.entry import compare_edits, graph_values

    client, info = engine
    graph = record_graph(*local)
    edit = parse_edit("relu1:output=zero()")
    there = client.call("values", GraphValuesRequest(info.request, "sample:star", graph, target="3", run_id=4))
    here = graph_values(local[0], local[1], graph, target="3")
    assert there.to_json() == here.to_json() and there == here
    assert there.nodes["conv1"].count > 0 and there.nodes["conv1"].grad_sq > 0
    compared = client.call("values", GraphValuesRequest(info.request, "sample:star", graph, "edits", (edit,),
                                                        run_id=5))
    mine = compare_edits(local[0], local[1], graph, [edit])
    assert compared.to_json() == mine.to_json() and compared.first_divergent == mine.first_divergent is not None


def test_a_graph_of_a_model_the_engine_does_not_hold_is_refused_in_one_line(engine):
    client, _info = engine
    with pytest.raises(EngineError) as caught:
        client.call("graph", GraphRequest(ModelRequest("demo-detector"), "sample:star"))
    assert str(caught.value) == "The engine holds demo, not demo-detector: load it first."


def test_next_event_reads_the_events_of_two_requests_in_flight(engine, local):
    from inspector.core.graph import record_graph

    client, info = engine
    graph = record_graph(*local)
    first = client.send("graph", GraphRequest(info.request, "sample:star", 21))
    second = client.send("values", GraphValuesRequest(info.request, "sample:star", graph, run_id=22))
    seen: dict[str, list[str]] = {first: [], second: []}
    last = {}
    deadline = time.monotonic() + 60
    while len(last) < 2 and time.monotonic() < deadline:
        event = client.next_event(0.5)
        if event is None:
            continue
        seen[event.id].append(event.kind)
        if event.kind in TERMINAL:
            last[event.id] = event.body
    assert seen[first][0] == seen[second][0] == "accepted"
    assert seen[first][-1] == seen[second][-1] == "result"
    assert last[first].run_id == 21 and last[second].graph == graph
    assert client.next_event(0.05) is None  # nothing more is coming


def test_the_docs_graph_example_runs_against_the_server(engine, capsys):
    from pathlib import Path

    page = (Path(__file__).resolve().parents[3] / "docs" / "tasks" / "remote.md").read_text(encoding="utf-8")
    code = next(block.split("```", 1)[0] for block in page.split("```python\n")[1:] if '"graph"' in block)
    client, info = engine
    shown = {}
    ids = "[n.id for n in recorded.graph.nodes]"
    exec(compile(code.replace(ids, f"shown['ids'] = {ids}"), "docs/tasks/remote.md", "exec"),  # noqa: S102
         {"engine": client, "info": info, "shown": shown})
    assert shown["ids"][:4] == ["input", "conv1", "bn1", "relu1"]  # as the page says


def test_latest_wins_in_the_graph_lane_and_a_waiting_graph_is_cancelled_by_id(engine):
    """Behind a slow attribution, a second graph request replaces the first one waiting in the graph lane (which
    ends `cancelled`); a values request waiting is cancelled by its id before it starts."""
    from inspector.core.graph.record.nodes import Graph
    from inspector.core.records.requests import AttributionRequest

    client, info = engine
    slow = client.send("attribute", AttributionRequest(info.request, "sample:star", method="ig",
                                                       options=(("steps", 5000),), run_id=9))
    first = client.send("graph", GraphRequest(info.request, "sample:star", 31))
    second = client.send("graph", GraphRequest(info.request, "sample:star", 32))
    waiting = client.send("values", GraphValuesRequest(info.request, "sample:star", Graph((), ()), run_id=33))
    assert client.cancel(waiting) and client.cancel(slow)
    ends = {key: [e for e in client.events(key, timeout=60)][-1] for key in (first, second, waiting, slow)}
    assert ends[first].kind == "cancelled" and ends[first].body.startswith(f"Replaced by {second}")
    assert ends[waiting].kind == "cancelled" and ends[waiting].body == "Cancelled before it started."
    assert ends[slow].kind == "cancelled"
    assert ends[second].kind == "result" and ends[second].body.run_id == 32
