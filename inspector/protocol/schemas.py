"""The JSON schemas every message is checked by (jsonschema), and the body each kind must hold."""

from __future__ import annotations

from functools import cache
from typing import Any

from . import VERSION, kinds, registry
from .errors import ProtocolError

#: What a `list` request shows of a folder: its folders and images, every entry, or every image below it.
LIST_SHOWS = ("images", "all", "nested")


def _tagged(tag: str, inner: dict, **more: dict) -> dict:
    return {"type": "object", "properties": {tag: inner, **more}, "required": [tag, *more],
            "additionalProperties": False}


_VALUE = {"$ref": "#/$defs/value"}
_VALUES = {"type": "array", "items": _VALUE}

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "A message of the Network Inspector engine protocol",
    "type": "object",
    "properties": {
        "v": {"const": VERSION},
        "kind": {"enum": sorted({*kinds.REQUESTS, *kinds.EVENTS})},
        "id": {"type": "string", "minLength": 1, "maxLength": 128},
        "body": _VALUE,
        "frames": {"type": "integer", "minimum": 0, "maximum": 100_000},
    },
    "required": ["v", "kind", "id", "body", "frames"],
    "additionalProperties": False,
    "$defs": {
        "value": {"anyOf": [
            {"type": ["null", "boolean", "number", "string"]},
            _VALUES,
            _tagged("$float", {"enum": ["NaN", "Infinity", "-Infinity"]}),
            _tagged("$tuple", _VALUES),
            _tagged("$set", _VALUES),
            _tagged("$dict", {"type": "array", "items": {"type": "array", "prefixItems": [_VALUE, _VALUE],
                                                        "minItems": 2, "maxItems": 2}}),
            _tagged("$bytes", {"type": "string", "contentEncoding": "base64"}),
            _tagged("$scalar", {"enum": ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                         "uint64", "float16", "float32", "float64"]},
                    value={"anyOf": [{"type": ["boolean", "number"]},
                                     _tagged("$float", {"enum": ["NaN", "Infinity", "-Infinity"]})]}),
            _tagged("$array", {"type": "integer", "minimum": 0}),
            _tagged("$record", {"type": "string"},
                    fields={"type": "object", "additionalProperties": _VALUE}),
        ]},
    },
}


#: What is checked as each message is read: the envelope, its body any JSON. The body's grammar (SCHEMA's
#: `value`) is checked node by node as it is decoded (`values.decode`): the schema's walk of a run's result takes
#: 60 ms of Python, the decoder's 5. The suite checks every message `to_wire` makes against the whole SCHEMA.
ENVELOPE = {**SCHEMA, "properties": {**SCHEMA["properties"], "body": {}}}
del ENVELOPE["$defs"]


@cache
def validator(whole: bool = False):
    """The jsonschema validator of the envelope (or, `whole`, of the envelope and its body's every node)."""
    from jsonschema import Draft202012Validator

    schema = SCHEMA if whole else ENVELOPE
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def check_envelope(data: Any, whole: bool = False) -> None:
    """ProtocolError (one line: the first thing wrong) unless `data` is a message's JSON."""
    errors = sorted(validator(whole).iter_errors(data), key=lambda e: len(e.path))
    if errors:
        error = errors[0]
        where = "/".join(map(str, error.absolute_path)) or "the message"
        message = error.message if len(error.message) < 200 else error.message[:200] + "..."
        raise ProtocolError(f"A message the protocol does not read ({where}): {message}")


def check_body(kind: str, body: Any) -> None:
    """ProtocolError unless `body` is what a `kind` message holds."""
    if kind in kinds.REQUESTS:
        record = kinds.REQUESTS[kind][1]
        if record is not None:
            if type(body) is not registry.record_class(record):
                raise ProtocolError(f"A {kind} request's body is a {record}, not {_name(body)}.")
        elif kind == "catalogue" and body is not None:
            raise ProtocolError("A catalogue request's body is null.")
        elif kind == "cancel" and not isinstance(body, str):
            raise ProtocolError("A cancel request's body is the id of the request to stop.")
        elif kind == "drawn" and not isinstance(body, str):
            raise ProtocolError("A drawn request's body is the id of the run whose panels are drawn.")
        elif kind == "arrays" and not (isinstance(body, dict) and set(body) == {"run", "names"}
                                       and isinstance(body["run"], int) and isinstance(body["names"], list)
                                       and all(isinstance(n, str) for n in body["names"])):
            raise ProtocolError("An arrays request's body is {\"run\": a run's id, \"names\": [capture names]}.")
        elif kind == "list" and not (isinstance(body, dict) and set(body) == {"path", "show"}
                                     and isinstance(body["path"], str) and body["show"] in LIST_SHOWS):
            raise ProtocolError("A list request's body is {\"path\": a folder, \"show\": \"images\", \"all\" "
                                "or \"nested\"}.")
        elif kind == "summary" and not (isinstance(body, dict) and set(body) == {"path"}
                                        and isinstance(body["path"], str)):
            raise ProtocolError("A summary request's body is {\"path\": an evaluation's folder}.")
        return
    if kind == "failure" and type(body) is not registry.record_class("Failure"):
        raise ProtocolError(f"A failure event's body is a Failure, not {_name(body)}.")
    if kind in ("accepted", "error") and not isinstance(body, str):
        raise ProtocolError(f"A {kind} event's body is a text, not {_name(body)}.")
    if kind == "progress" and not (isinstance(body, dict) and set(body) - {"stage"} == {"done", "total", "rate"}
                                   and isinstance(body.get("stage", ""), str)):
        raise ProtocolError("A progress event's body holds done, total and rate (and a stage, as text).")


def _name(value: Any) -> str:
    return type(value).__name__
