"""Session files, edits, keys and targets from arbitrary input: a value or an InspectorError, never
another exception (property-based, Hypothesis), and named fields for wrong sessions."""

import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from inspector.core.edits import Edit, parse_edit
from inspector.core.common.errors import InspectorError, SpecError
from inspector.core.common.keys import Key, parse_key
from inspector.core.target.objective import Target, parse_target
from inspector.core.session.file import Session, load_session, session_from_dict

FAST = settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
FIELDS = ["format", "version", "model", "input", "device", "target", "layers", "sites", "input_grad", "edits",
          "extra"]
EDIT_WORDS = ["relu1:grad_input", "fc1:output#1", "fc1.bias:grad", "=", "scale(", "clamp(min=0)", "zero()",
              "[0, 3]", ")", "#", ":", "zero_channels", "keep_channels([1])", "noise(1, seed=2)", "1e400", "-",
              "'a'", "{[1]: 2}", "\x00", "((((", "lambda: 0", "scale(k=True)", "clip_norm(max=0)"]


def _sessionish(fields: dict) -> dict:
    return {"format": "network-inspector-session", **fields}


def _session_or_error(data):
    try:
        session = session_from_dict(data)
    except InspectorError:
        return None
    assert isinstance(session, Session)
    assert all(isinstance(e, Edit) for e in session.edits)
    return session


@FAST
@given(json_values)
def test_any_json_is_a_session_or_an_inspector_error(data):
    _session_or_error(data)


@FAST
@given(st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=6))
def test_any_session_shaped_json_is_a_session_or_an_inspector_error(fields):
    _session_or_error(_sessionish(fields))


@FAST
@given(st.lists(st.sampled_from(EDIT_WORDS) | st.text(max_size=8), max_size=6).map("".join))
@example("fc1:output=scale({[1]: 2})")  # each of these raised something else once
@example("fc1:output=scale(k=" + "-" * 100_000 + "1)")
@example("fc1:output=scale(1e400)")
@example("fc1:output=scale(\x00)")
def test_any_text_is_an_edit_or_an_inspector_error(text):
    try:
        assert isinstance(parse_edit(text), Edit)
    except InspectorError:
        pass


@FAST
@given(st.text(max_size=40) | st.lists(st.sampled_from(["fc1", ":", "output", "grad", "#", "1", "[", "]", "."]),
                                       max_size=8).map("".join))
def test_any_text_is_a_key_or_an_inspector_error(text):
    try:
        assert isinstance(parse_key(text), Key)
    except InspectorError:
        pass


@FAST
@given(json_values | st.floats() | st.text(max_size=12))
@example(2.5)
@example(True)
@example("seg:\u00b2")
def test_any_value_is_a_target_or_an_inspector_error(value):
    try:
        assert isinstance(parse_target(value), Target)
    except InspectorError:
        pass


@pytest.mark.parametrize("fields, named", [
    ({"layers": 5}, "layers must be a list, not 5"),
    ({"layers": ["conv1", 3]}, "layers[1] must be text, not 3"),
    ({"sites": ["output", "gradient"]}, "sites[1] must be one of input, output"),
    ({"edits": [{"enabled": True}]}, "edits[0]"),
    ({"edits": [{"edit": 3}]}, "edits[0].edit must be text, not 3"),
    ({"edits": [5]}, "edits[0] must be an edit written KEY=OP(ARGS)"),
    ({"model": "resnet18"}, "model must be an object"),
    ({"model": {"source": 7}}, "model.source must be text, not 7"),
    ({"model": {"source": "demo", "seed": "7"}}, "model seed must be a whole number"),
    ({"version": "abc"}, 'version must be a whole number, not "abc"'),
    ({"input_grad": "yes"}, 'input_grad must be true or false, not "yes"'),
    ({"layer": ["conv1"]}, "unknown field(s) 'layer'"),
    ({"extra": []}, "extra must be an object"),
])
def test_a_wrong_field_is_named(tmp_path, fields, named):
    path = tmp_path / "s.inspector.json"
    path.write_text(json.dumps(_sessionish(fields)))
    with pytest.raises(SpecError) as info:
        load_session(path)
    message = str(info.value)
    assert "\n" not in message
    assert named in message


@pytest.mark.parametrize("content", ["[]", "5", '"text"', "null", "[" * 100_000 + "]" * 100_000])
def test_json_that_is_no_session(tmp_path, content):
    path = tmp_path / "s.inspector.json"
    path.write_text(content)
    with pytest.raises(SpecError, match="not a Network Inspector session|nested too deeply"):
        load_session(path)


def test_a_folder_is_no_session(tmp_path):
    with pytest.raises(SpecError, match="is a folder"):
        load_session(tmp_path)


@pytest.mark.parametrize("text, message", [
    ("fc1:output=scale(1e400)", "k must be a finite number"),
    ("fc1:output=scale({[1]: 2})", "must be plain numbers or lists"),
    ("fc1:output=clamp(min=2, max=1)", r"clamp: min \(2\) is above max \(1\)"),
    ("fc1:output=noise(1, seed=1.5)", "noise: seed must be a whole number >= 0, not 1.5"),
    ("fc1:output=noise(1, seed=-1)", "noise: seed must be a whole number >= 0, not -1"),
])
def test_edit_arguments_that_once_slipped_through(text, message):
    with pytest.raises(SpecError, match=message):
        parse_edit(text)


@settings(max_examples=60, deadline=None, database=None)
@given(st.binary(max_size=200) | json_values.map(lambda v: json.dumps(v).encode()))
def test_any_file_content_is_a_session_or_an_inspector_error(content):
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.inspector.json"
        path.write_bytes(content)
        try:
            assert isinstance(load_session(path), Session)
        except InspectorError:
            pass
