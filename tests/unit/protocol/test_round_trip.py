"""Issue 53, item 2: every record kind that crosses is written down as JSON (checked by the protocol's whole
schema) and array frames, and read back equal: requests made by Hypothesis, the engine's records from real runs
of the demo models (compared field by field with an independent walk, arrays bit for bit), a trust card of the demo
model among them."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.records.evaluation import EvaluationDone, EvaluationRequest
from inspector.core.records.failure import Failure
from inspector.core.records.requests import (AgainstRequest, AtlasRequest, AttributionRequest, ModelRequest,
                                             RunRequest)
from inspector.core.records.trust import TrustRequest
from inspector.protocol import kinds, registry, schemas
from inspector.protocol.messages import Message, from_wire, to_wire


def same(a, b, path="value") -> None:
    """`a` and `b` equal in type and value, all the way down (arrays: dtype, shape and every bit; NaN equal)."""
    assert type(a) is type(b), (path, type(a), type(b))
    if dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            same(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}")
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, path
        assert a.tobytes() == b.tobytes(), path
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}[{i}]")
    elif isinstance(a, dict):
        assert list(a) == list(b), path
        for k in a:
            same(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, (float, np.floating)) and math.isnan(a):
        assert math.isnan(b), path
    else:
        assert a == b, (path, a, b)


def crossed(kind: str, body):
    """`body` sent as a `kind` message and read back; its text checked against the whole schema."""
    parts = to_wire(Message(kind, "req-1", body))
    schemas.check_envelope(json.loads(parts[0]), whole=True)
    message = from_wire(parts)
    assert (message.kind, message.id) == (kind, "req-1")
    return message.body


texts = st.text(st.characters(codec="utf-8"), max_size=12)
paths = st.sampled_from(["conv1", "relu1", "block.0", "fc", "layer4.1.conv2"])
models = st.builds(ModelRequest, texts, st.none() | texts, st.booleans(), st.none() | st.integers(0, 2**31 - 1))
edit_texts = st.sampled_from(["relu1:grad_input=clamp(min=0)", "conv1:output=scale(2.5)", "fc:output=zero()",
                              "conv1:output=zero_channels([1, 3])", "relu1:output#1=noise(0.1, seed=4)"])
targets = st.sampled_from(["auto", "3", "box:0", "box:1,2,30,40@7", "seg:2"])


@st.composite
def run_requests(draw):
    from inspector.core.runspec import RunSpec

    spec = RunSpec.make(draw(st.lists(paths, max_size=3)),
                        draw(st.sets(st.sampled_from(["output", "grad_output", "input", "grad_input"]), min_size=1)),
                        draw(st.lists(edit_texts, max_size=2)), draw(targets), draw(st.booleans()),
                        stats_now=draw(st.none() | st.lists(paths, max_size=2)))
    against = draw(st.none() | st.builds(AgainstRequest, models, st.just(()), st.floats(0, 1)))
    return RunRequest(draw(models), draw(texts), draw(st.sampled_from(["cpu", "cuda:0"])), spec, draw(st.booleans()),
                      draw(st.booleans()), draw(st.integers(0, 10**9)), draw(st.none() | st.tuples(paths)), against)


options = st.lists(st.tuples(st.sampled_from(["steps", "baseline", "window", "quadrature"]),
                             st.integers(-5, 500) | st.floats(allow_nan=False) | texts), max_size=3)
attributions = st.builds(AttributionRequest, models, texts, st.just("cpu"), st.sampled_from(["gradcam", "ig"]),
                         targets, st.none() | paths, st.integers(0, 99), options.map(tuple),
                         st.lists(st.sampled_from(["deletion", "insertion"]), max_size=2).map(tuple),
                         st.integers(1, 200))
atlases = st.builds(AtlasRequest, st.sampled_from(["open", "build", "pictures"]), texts, st.none() | models, texts,
                    st.lists(paths, max_size=3).map(tuple), st.integers(1, 50), st.integers(1, 64))
originals = st.none() | st.builds(lambda m: _attribution(m), st.integers(1, 4))
trusts = st.builds(TrustRequest, models, texts, st.just("cpu"), st.sampled_from(["gradcam", "saliency"]), targets,
                   st.none() | paths, st.integers(-99, 0), options.map(tuple),
                   protocol=st.sampled_from(["inspector", "rise2018"]), seed=st.none() | st.integers(0, 2**31 - 1),
                   threshold=st.floats(0.01, 1), original=originals, maps=st.booleans())
folders = st.sampled_from(["images", "data/shapes", "/srv/data/x"])
names = st.lists(st.sampled_from(["saliency", "gradcam", "ig", "deletion", "insertion", "road"]), min_size=1,
                 max_size=3).map(tuple)
evaluations = st.builds(EvaluationRequest, models, folders, folders, names, names,
                        st.sampled_from(["inspector", "rise2018"]), st.none() | st.integers(1, 100),
                        st.integers(1, 16), st.just("cpu"), st.integers(0, 99))
summaries = st.dictionaries(texts, st.none() | st.integers() | st.floats(allow_nan=False) | texts
                            | st.lists(st.dictionaries(texts, st.floats(allow_nan=False) | texts, max_size=3),
                                       max_size=2), max_size=4)
failures = st.builds(Failure, texts, st.sampled_from(["load", "run", "attribution"]), texts, st.integers(0, 99),
                     st.booleans(), texts)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.tuples(st.just("load"), models), st.tuples(st.just("run"), run_requests()),
                 st.tuples(st.just("capture"), run_requests()), st.tuples(st.just("attribute"), attributions),
                 st.tuples(st.just("atlas"), atlases), st.tuples(st.just("failure"), failures),
                 st.tuples(st.just("checks"), trusts), st.tuples(st.just("evaluate"), evaluations),
                 st.tuples(st.just("result"), st.builds(EvaluationDone, folders, summaries))))
def test_every_request_kind_and_a_failure_cross_and_come_back_equal(case):
    kind, body = case
    same(crossed(kind, body), body)


def _attribution(n: int):
    """A map already made, as Check these maps sends it back with its request."""
    from inspector.core.attribution.record import Attribution

    return Attribution("gradcam", np.linspace(0, 1, n * n, dtype=np.float32).reshape(n, n), "top1", 3, "relu3",
                       details=(("seconds", 0.5),))


dtypes = st.sampled_from(["bool", "int8", "uint8", "int16", "int32", "int64", "uint64", "float16", "float32",
                          "float64"])


@st.composite
def arrays(draw):
    dtype = np.dtype(draw(dtypes))
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=4)))
    raw = draw(st.binary(min_size=math.prod(shape) * dtype.itemsize, max_size=math.prod(shape) * dtype.itemsize))
    array = np.frombuffer(raw, dtype=dtype).reshape(shape)
    return array.T if array.ndim > 1 and draw(st.booleans()) else array  # a view that is not C-contiguous too


leaves = (st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats() | texts | st.binary(max_size=8)
          | arrays() | st.builds(np.float32, st.floats(width=32)) | st.builds(np.int64, st.integers(-9, 9)))
values = st.recursive(leaves, lambda inner: st.lists(inner, max_size=3) | st.lists(inner, max_size=3).map(tuple)
                      | st.dictionaries(texts | st.integers(), inner, max_size=3)
                      | st.frozensets(st.integers() | texts, max_size=3), max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(values)
def test_any_value_crosses_as_a_result_and_comes_back_equal(value):
    back = crossed("result", value)
    if isinstance(value, np.ndarray):
        assert not back.flags.writeable  # a view of the frame's bytes, read-only
        value = np.ascontiguousarray(value)
    same(_contiguous(back), _contiguous(value))


def _contiguous(value):
    if isinstance(value, np.ndarray):
        return np.ascontiguousarray(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_contiguous(v) for v in value)
    if isinstance(value, dict):
        return {k: _contiguous(v) for k, v in value.items()}
    return value


def test_every_name_in_the_allowlist_is_a_dataclass_of_this_project():
    for name in registry.names():
        cls = registry.record_class(name)
        assert dataclasses.is_dataclass(cls) and cls.__module__.startswith("inspector.core.")
        assert registry.name_of(cls) == name


def test_every_request_kind_names_a_record_of_the_allowlist_or_none():
    for kind, (lane, record) in kinds.REQUESTS.items():
        assert lane and (record is None or record in registry.names()), kind


@pytest.fixture(scope="module")
def engine_records():
    """The records the engine sends, from real runs: the demo classifier and the demo detector loaded, run with an
    edit and a baseline, their statistics finished and diagnosed, an attribution with its deletion curve, and a
    second model compared."""
    from inspector.core.attribution.sanity.served import card_on
    from inspector.core.model_info import describe
    from inspector.core.runspec import RunSpec
    from inspector.core.workbench import Workbench

    bench, found = Workbench(), {}
    for source in ("demo", "demo-detector"):
        model = ModelRequest(source)
        loaded, tree = bench.load(model)
        found[f"{source} info"] = describe(loaded, tree, model)
        edits = ["conv1:output=scale(2)"] if source == "demo" else []
        outcome = bench.execute(RunRequest(model, "sample:star", spec=RunSpec.make(["conv1"] * (source == "demo"),
                                                                                   edits=edits),
                                           baseline=True, analyse=True, visible=("conv1",)))
        update = bench.finish(outcome)
        found[f"{source} outcome"], found[f"{source} update"] = outcome, bench.diagnose(outcome, update)
        method = "gradcam" if source == "demo" else "drise"
        found[f"{source} {method}"] = bench.attribute(AttributionRequest(model, "sample:star", method=method,
                                                                         metrics=("deletion",), metric_steps=8,
                                                                         options=(("masks", 16),) * (source != "demo")))
    found["against"] = bench.execute(RunRequest(ModelRequest("demo"), "sample:star", spec=RunSpec.make(["conv1"]),
                                                against=AgainstRequest(ModelRequest("demo"))))
    asked = TrustRequest(ModelRequest("demo"), "sample:star", method="gradcam", layer="relu3", seed=5)
    found["demo trust card"] = card_on(bench, asked)  # curves, MPRT (its maps), random-logit, the checks' times
    found["evaluation done"] = EvaluationDone("evaluation", {"images": 4, "methods": ["gradcam"], "skipped": [],
                                                             "summary": [{"mean": 0.25, "ci_low": None}]})
    return found


@pytest.mark.parametrize("name", ["demo info", "demo outcome", "demo update", "demo gradcam", "demo-detector info",
                                  "demo-detector outcome", "demo-detector update", "demo-detector drise",
                                  "demo trust card", "evaluation done", "against"])
def test_the_engine_s_records_cross_and_come_back_equal(engine_records, name):
    record = engine_records[name]
    same(crossed("result", record), record)
