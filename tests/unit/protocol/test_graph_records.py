"""Issue 53: the Graph tab's records cross the protocol as $-tagged JSON (checked by the whole schema), no pickle,
and come back equal: a real recorded graph of the demo model and of the demo detector, its layout, one run's values
on it and two runs compared, and the two requests that ask for them."""

from __future__ import annotations

import json

import pytest

from inspector.core.records.graph import GraphRecorded, GraphRequest, GraphValuesRequest
from inspector.core.records.requests import ModelRequest
from inspector.protocol import schemas
from inspector.protocol.errors import ProtocolError
from inspector.protocol.messages import Message, from_wire, to_wire


def crossed(kind: str, body):
    parts = to_wire(Message(kind, "g-1", body))
    text = parts[0]
    assert "pickle" not in text and "\\x80" not in text
    schemas.check_envelope(json.loads(text), whole=True)
    return from_wire(parts).body


@pytest.fixture(scope="module", params=["demo", "demo-detector"])
def recorded(request):
    from inspector.core import load_input, load_model
    from inspector.core.graph import record_graph
    from inspector.core.graph.layout import GraphLayout
    from inspector.core.graph.values import compare_edits, graph_values

    loaded = load_model(request.param)
    x = load_input("sample:star", loaded.preprocess, loaded.input_shape)
    graph = record_graph(loaded, x)
    edit = "relu1:output=zero()" if request.param == "demo" else None
    values = graph_values(loaded, x, graph)
    compared = compare_edits(loaded, x, graph, [edit]) if edit else None
    return graph, GraphLayout(graph).layout(), values, compared


def test_a_recorded_graph_and_its_layout_cross_and_come_back_equal(recorded):
    graph, layout, _values, _compared = recorded
    back = crossed("result", GraphRecorded(5, graph, layout, (1, 3, 64, 64), 0.25))
    assert type(back) is GraphRecorded and back.run_id == 5 and back.input_shape == (1, 3, 64, 64)
    assert back.graph == graph and back.graph.to_json() == graph.to_json()
    assert back.layout == layout and back.layout.open_groups == frozenset()
    assert [e.shape for e in back.graph.edges] == [e.shape for e in graph.edges]  # tuples stay tuples
    assert all(type(e.shape) is tuple for e in back.graph.edges)


def test_a_runs_values_and_a_comparison_on_the_graph_cross_equal(recorded):
    graph, _layout, values, compared = recorded
    back = crossed("result", values)
    assert back == values and back.to_json() == values.to_json()
    assert back.for_view(graph.closed()).to_json() == values.for_view(graph.closed()).to_json()
    if compared is not None:
        again = crossed("result", compared)
        assert again == compared and again.first_divergent == compared.first_divergent is not None
        assert again.change == compared.change and again.first.to_json() == compared.first.to_json()


def test_the_graph_requests_cross_with_their_graph_edits_and_frame():
    import numpy as np

    from inspector.core.edits import parse_edit
    from inspector.core.graph.model import Edge, Graph, Node

    graph = Graph((Node("input", "input", "input"), Node("output", "output", "output")),
                  (Edge("input", "output", (1, 3), "float32", None, "input"),))
    frame = np.arange(12, dtype=np.uint8).reshape(2, 2, 3)
    ask = GraphRequest(ModelRequest("demo", seed=3), "VIDEO@frame 4", 7, frame, ("block",), False)
    back = crossed("graph", ask)
    assert back == ask and back.leaves == ("block",) and back.frame.tobytes() == frame.tobytes()
    edits = (parse_edit("fc:output=zero()"),)
    values = GraphValuesRequest(ModelRequest("demo"), "sample:star", graph, "against", edits,
                                ModelRequest("demo", "w.safetensors"), "first", "3", 9, ("a", "b"), None, 0.01)
    again = crossed("values", values)
    assert again == values and again.graph == graph and again.threshold == 0.01


def test_a_graph_request_body_of_another_record_is_refused():
    with pytest.raises(ProtocolError, match="graph request's body is a GraphRequest"):
        from_wire(to_wire(Message("graph", "g-2", ModelRequest("demo"))))
