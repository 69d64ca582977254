"""Issue 53 item 4: the Concepts view's requests and answers, and the catalogue, as protocol messages. Each record
crosses and comes back equal (Hypothesis), a build's progress carries its stage, a catalogue request's body is null,
and what a client cannot ask (an unknown kind of concepts request, a body of the wrong record) is refused in one
line."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.records.concepts import (BuildConceptsRequest, ConceptMap, ConceptPagePicture, ConceptsRead,
                                             ConceptsRequest, OpenedConcepts)
from inspector.core.records.requests import ModelRequest
from inspector.protocol import kinds, schemas
from inspector.protocol.errors import ProtocolError
from inspector.protocol.messages import Message, from_wire, to_wire

texts = st.text(st.characters(codec="utf-8"), max_size=12)
models = st.builds(ModelRequest, texts, st.none() | texts, st.booleans(), st.none() | st.integers(0, 2**31 - 1))
small = st.integers(0, 99)
frames = st.none() | st.integers(1, 4).map(lambda n: np.arange(n * n * 3, dtype=np.uint8).reshape(n, n, 3))
concepts_requests = st.builds(ConceptsRequest, st.sampled_from(["open", "read", "map", "page"]), texts, models, texts,
                              st.none() | small, st.none() | small, st.sampled_from(["cpu", "cuda:0"]), small, frames)
builds = st.builds(BuildConceptsRequest, models, texts, texts, st.integers(1, 64), st.sampled_from(["nmf", "sae"]),
                   texts, st.sampled_from(["cpu", "cuda:0"]), st.none() | st.integers(1, 8))


def floats(*shape):
    return st.just(np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32))


answers = st.one_of(
    st.builds(OpenedConcepts, texts, texts, st.sampled_from(["nmf", "sae"]), small, texts,
              st.dictionaries(texts, st.integers() | texts | st.lists(st.floats(allow_nan=False)), max_size=3)),
    st.builds(ConceptsRead, small, texts, texts, floats(4), floats(4, 8, 8), floats(4, 2, 2), st.none() | floats(4),
              st.none() | small, st.floats(0, 10)),
    st.builds(ConceptMap, small, small, st.none() | small, st.none() | floats(8, 8), texts),
    st.builds(ConceptPagePicture, texts, small, st.none() | st.just(np.zeros((4, 12, 3), np.uint8)), texts),
)


def crossed(kind: str, body):
    parts = to_wire(Message(kind, "req-1", body))
    schemas.check_envelope(json.loads(parts[0]), whole=True)
    return from_wire(parts).body


def same(a, b) -> None:
    import dataclasses

    assert type(a) is type(b)
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes(), f.name
        else:
            assert x == y, f.name


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.tuples(st.just("concepts"), concepts_requests), st.tuples(st.just("learn"), builds),
                 st.tuples(st.just("result"), answers)))
def test_the_concepts_records_cross_and_come_back_equal(case):
    kind, body = case
    same(crossed(kind, body), body)


def test_the_kinds_and_their_lanes():
    assert kinds.REQUESTS["concepts"] == ("concepts", "ConceptsRequest")
    assert kinds.REQUESTS["learn"] == ("job", "BuildConceptsRequest")  # one folder job at a time, as the atlas's
    assert kinds.REQUESTS["catalogue"] == ("catalogue", None)


def test_a_progress_says_its_stage_and_a_catalogue_request_has_no_body():
    body = {"done": 3, "total": 20, "rate": 1.5, "stage": "fit"}
    assert crossed("progress", body) == body
    assert crossed("catalogue", None) is None
    with pytest.raises(ProtocolError, match="A progress event's body holds done, total and rate"):
        crossed("progress", {"done": 3, "total": 20, "rate": 1.5, "stage": 2})
    with pytest.raises(ProtocolError, match="A catalogue request's body is null"):
        crossed("catalogue", {"all": True})


def test_what_a_client_cannot_ask_is_refused_in_one_line():
    text = to_wire(Message("concepts", "c1", ConceptsRequest("open", "x", ModelRequest("demo"))))[0]
    wrong = text.replace('"kind":"open"', '"kind":"erase"')
    with pytest.raises(ProtocolError) as caught:
        from_wire([wrong])
    assert "open, read, map, page" in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(ProtocolError, match="A learn request's body is a BuildConceptsRequest"):
        from_wire(to_wire(Message("learn", "c2", ConceptsRequest("open", "x", ModelRequest("demo")))))
