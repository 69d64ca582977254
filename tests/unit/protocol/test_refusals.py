"""Issue 53, item 2: what the protocol does not read is refused in one line (ProtocolError), and nothing is built
from it: another version, an unknown kind or record, a body of the wrong record, a bare NaN, a value nested too
deep, array frames whose header does not match their bytes or their message, object arrays, and edits or
targets their parsers refuse."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from inspector.core.records.requests import ModelRequest
from inspector.protocol import VERSION, frames
from inspector.protocol.errors import ProtocolError
from inspector.protocol.messages import Message, from_wire, to_wire


def text(**fields) -> str:
    return json.dumps({"v": VERSION, "kind": "load", "id": "a", "frames": 0,
                       "body": {"$record": "ModelRequest", "fields": {"source": "demo"}}, **fields})


def refused(parts, *words: str) -> str:
    with pytest.raises(ProtocolError) as info:
        from_wire(parts)
    said = str(info.value)
    assert "\n" not in said and all(w in said for w in words), said
    return said


def test_a_good_message_reads():
    assert from_wire([text()]).body == ModelRequest("demo")


def test_another_version_is_named_with_this_one():
    refused([text(v=2)], "version 2", f"version {VERSION}")
    refused([text(v="1")], "version '1'")


@pytest.mark.parametrize("fields, words", [
    ({"kind": "shell"}, ("kind", "'shell'")),
    ({"id": ""}, ("id",)),
    ({"id": "x" * 129}, ("id",)),
    ({"frames": -1}, ("frames",)),
    ({"extra": 1}, ("extra",)),
    ({"body": {"$record": "Popen", "fields": {}}}, ("Unknown record 'Popen'",)),
    ({"body": {"$record": "ModelRequest", "fields": {"source": "demo", "code": "x"}}}, ("no field code",)),
    ({"body": {"$record": "RunRequest", "fields": {}}}, ("load request's body is a ModelRequest, not RunRequest",)),
    ({"body": {"$tuple": [1], "$set": [2]}}, ("one $-tag",)),
    ({"body": {"$eval": "1"}}, ("$eval",)),
    ({"body": {"$array": 0}}, ("names no frame",)),
    ({"body": {"$scalar": "object", "value": 1}}, ("$scalar",)),
    ({"body": {"$set": [[1]]}}, ("$set",)),
    ({"body": {"$dict": [[[1], 2]]}}, ("$dict",)),
    ({"body": {"$bytes": "!!"}}, ("base64",)),
])
def test_a_message_the_schema_or_the_decoder_refuses_is_said_in_one_line(fields, words):
    refused([text(**fields)], *words)


def test_a_bare_non_finite_number_and_text_that_is_not_json_are_refused():
    refused([text().replace('"demo"', "NaN")], "NaN")
    refused(["{" * 5], "not JSON")
    refused([b"\xff\xfe"], "not JSON")


def test_a_value_nested_past_the_limit_is_refused_both_ways():
    deep = "demo"
    for _ in range(80):
        deep = [deep]
    with pytest.raises(ProtocolError, match="nested more than"):
        to_wire(Message("result", "a", deep))
    body = '"demo"'
    for _ in range(80):
        body = f'{{"$tuple": [{body}]}}'
    refused([text().replace('{"$record": "ModelRequest", "fields": {"source": "demo"}}', body)], "nested")


def test_what_is_not_a_record_of_the_allowlist_cannot_be_sent():
    from dataclasses import dataclass

    @dataclass
    class ModelRequest:  # noqa: F811 - a namesake from elsewhere is not the record
        source: str = "x"

    with pytest.raises(ProtocolError, match="not one of the protocol's records"):
        to_wire(Message("result", "a", ModelRequest()))
    with pytest.raises(ProtocolError, match="cannot be sent"):
        to_wire(Message("result", "a", object()))
    with pytest.raises(ProtocolError, match="only bool, integer and float arrays"):
        to_wire(Message("result", "a", np.array([object()])))


def result_with(array: np.ndarray) -> list:
    return to_wire(Message("result", "r1", {"a": array}))


def header_of(frame: bytes) -> dict:
    (size,) = struct.unpack_from(">I", frame)
    return json.loads(frame[4:4 + size])


def with_header(frame: bytes, **changes) -> bytes:
    (size,) = struct.unpack_from(">I", frame)
    header = json.dumps({**header_of(frame), **changes}).encode()
    return struct.pack(">I", len(header)) + header + frame[4 + size:]


def test_array_frames_that_do_not_match_are_refused():
    text_part, frame = result_with(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert from_wire([text_part, frame]).body["a"].tolist() == [[0, 1, 2], [3, 4, 5]]
    refused([text_part], "said 1 array frames and 0 came")
    refused([text_part, frame, frame], "said 1 array frames and 2 came")
    refused([text_part, frame[:-1]], "has 23 bytes, not 24")
    refused([text_part, frame[:3]], "shorter than")
    refused([text_part, struct.pack(">I", 10**6) + frame[4:]], "header says 1000000 bytes")
    refused([text_part, with_header(frame, dtype="|O")], "dtype", "'|O'")
    refused([text_part, with_header(frame, dtype=">f4")], "dtype")
    refused([text_part, with_header(frame, shape=[3, 3])], "not 36")
    refused([text_part, with_header(frame, shape=[-2, -3])], "shape")
    refused([text_part, with_header(frame, id="other")], "frame 0 of message 'other'")
    refused([text_part, with_header(frame, index=1)], "frame 1")
    refused([text_part, with_header(frame, v=VERSION + 1)], f"version {VERSION + 1}")
    refused([text_part, with_header(frame, extra=1)], "header has")
    refused([text_part, struct.pack(">I", 3) + b"abc"], "not JSON")
    refused([text_part, "text, not bytes"], "binary")


def test_a_big_endian_array_travels_little_endian_with_its_values():
    array = np.arange(4, dtype=">i4")
    _, frame = result_with(array)
    assert header_of(frame)["dtype"] == "<i4"
    message_id, index, back = frames.unpack(frame)
    assert (message_id, index, back.tolist()) == ("r1", 0, [0, 1, 2, 3])


@pytest.mark.parametrize("edit, words", [
    ({"op": "__import__"}, ("Unknown op '__import__'",)),
    ({"args": {"$tuple": [{"$tuple": ["min", 0]}, {"$tuple": ["code", 1]}]}}, ("clamp has no argument 'code'",)),
])
def test_an_edit_the_parser_refuses_is_refused_off_the_wire(edit, words):
    from inspector.core.edits import parse_edit

    parts = to_wire(Message("result", "e", parse_edit("relu1:grad_input=clamp(min=0)")))
    data = json.loads(parts[0])
    data["body"]["fields"].update(edit)
    refused([json.dumps(data)], "Edit", *words)


def test_a_target_the_parser_would_read_otherwise_is_refused():
    from inspector.core.target.objective import parse_target

    data = json.loads(to_wire(Message("result", "t", parse_target("3")))[0])
    data["body"]["fields"]["kind"] = "auto"  # auto with a class index: its text, "auto", reads without it
    refused([json.dumps(data)], "target Target(kind='auto', index=3", "its text, 'auto'")
