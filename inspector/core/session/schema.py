"""The one schema of a session file (`*.inspector.json`), checked whole before anything is read from it.

JSON Schema (draft 2020-12), checked with `jsonschema`: a wrong field is named by its place in the
file (`edits[0]`, `model.seed`) before any model loads or any value is used.
"""

from __future__ import annotations

from ..common.errors import SpecError
from ..common.keys import SITE_CHOICES
from ..records.methods import METRIC_CURVES, METRICS, method_names
from ..records.signs import SIGNS

#: Text in a session holds no NUL byte (no file name, layer path or device can have one).
_NO_NUL = "^[^\\x00]*$"
_STRING = {"type": "string", "pattern": _NO_NUL}
_MAYBE_STRING = {"type": ["string", "null"], "pattern": _NO_NUL}
_EDIT_TEXT = {"type": "string", "pattern": _NO_NUL,
              "description": "an edit written KEY=OP(ARGS), e.g. relu1:grad_input=clamp(min=0)"}
_COUNT = {"type": ["integer", "null"], "minimum": 0, "maximum": 2**31 - 1}
_NUMBER = {"type": ["number", "null"]}

#: The map kept with the attribution choice (inspector.core.session.stored): its arrays are base64 `.npy`
#: text, decoded and checked (dtype, shape, size) by `stored.attribution_of`.
STORED: dict = {
    "type": "object",
    "required": ["method", "map"],
    "additionalProperties": False,
    "description": "the map made for this choice (core.session.stored)",
    "properties": {
        "method": _STRING,
        "sign": {"enum": [*SIGNS, None]},
        "target": _STRING,
        "target_index": _COUNT,
        "layer": _MAYBE_STRING,
        "map": {"type": "string", "description": "a base64 .npy array, (H, W) or (C, H, W) floats"},
        "baseline": {"type": "string", "description": "a base64 .npy array in the model's input space"},
        "details": {"type": "array", "items": {
            "type": "array", "minItems": 2, "maxItems": 2,
            "prefixItems": [_STRING, {"type": ["string", "number", "boolean", "null"]}]}},
        "notes": {"type": "array", "items": _STRING},
        "warnings": {"type": "array", "items": _STRING},
        "curves": {"type": "array", "items": {
            "type": "object", "required": ["metric", "scores", "auc", "score_of"], "additionalProperties": False,
            "properties": {"metric": {"enum": [c for curves in METRIC_CURVES.values() for c in curves]},
                           "scores": {"type": "array", "items": {"type": "number"}},
                           "auc": {"type": "number"}, "score_of": _STRING, "order": _STRING,
                           "protocol": _STRING, "at": {"type": "array", "items": {"type": "number"}},
                           "settings": {"type": "array", "items": {
                               "type": "array", "minItems": 2, "maxItems": 2,
                               "prefixItems": [_STRING, {"type": ["string", "number", "null"]}]}}}}},
        "completeness_gap": _NUMBER,
        "detections": {"type": ["array", "null"], "items": {
            "type": "object", "required": ["box", "label", "name", "score"], "additionalProperties": False,
            "properties": {"box": {"type": "array", "items": {"type": "number"}, "minItems": 4, "maxItems": 4},
                           "label": {"type": "integer", "minimum": 0, "maximum": 2**31 - 1}, "name": _STRING,
                           "score": {"type": "number"}}}},
        "target_detection": _COUNT,
    },
}

SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Network Inspector session",
    "type": "object",
    "required": ["format"],
    "additionalProperties": False,
    "properties": {
        "format": {"const": "network-inspector-session"},
        "version": {"type": "integer", "minimum": 0},
        "model": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "source": _STRING,
                "weights": _MAYBE_STRING,
                "seed": {},  # any value here: inspector.core.sources.seeds.check_seed is the one rule for seeds
            },
        },
        "input": _STRING,
        "device": _STRING,
        "target": {"type": ["string", "integer"], "pattern": _NO_NUL},
        "layers": {"type": "array", "items": _STRING},
        "sites": {"type": "array", "items": {"enum": list(SITE_CHOICES)}, "minItems": 1},
        "input_grad": {"type": "boolean"},
        "edits": {
            "type": "array",
            "items": {
                "oneOf": [
                    _EDIT_TEXT,
                    {
                        "type": "object",
                        "required": ["edit"],
                        "additionalProperties": False,
                        "properties": {"edit": _EDIT_TEXT, "enabled": {"type": "boolean"}},
                    },
                ],
            },
        },
        "attribution": {
            "type": "object",
            "required": ["method"],
            "additionalProperties": False,
            "description": "the Attribution tab's last choice: method, class, layer, the method's options, scores",
            "properties": {
                "method": {"enum": list(method_names())},  # the method table's, again when checked
                "target": _STRING,
                "layer": _MAYBE_STRING,
                "options": {"type": "object"},
                "metrics": {"type": "array", "items": {"enum": list(METRICS)}},
                "stored": STORED,
            },
        },
        "extra": {"type": "object"},
    },
}

_TYPE_WORDS = {"string": "text", "integer": "a whole number", "boolean": "true or false", "array": "a list",
               "object": "an object ({...})", "null": "null", "number": "a number"}


def _where(path) -> str:
    """`edits[0].edit` from jsonschema's absolute path."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "the file"


def _short(value) -> str:
    import json

    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):  # what no file holds (bytes, an array): a Session given to save_session
        text = " ".join(repr(value).split())
    return text if len(text) <= 60 else text[:57] + "..."


def _reason(error) -> str:
    """What is wrong, in words (jsonschema's own message for the rarer cases)."""
    kind, value = error.validator, error.validator_value
    if kind == "type":
        wanted = [value] if isinstance(value, str) else value
        return f"must be {' or '.join(_TYPE_WORDS.get(w, w) for w in wanted)}, not {_short(error.instance)}"
    if kind == "enum":
        return f"must be one of {', '.join(map(str, value))}, not {_short(error.instance)}"
    if kind == "pattern" and value == _NO_NUL:
        return "must not hold a NUL byte (\\x00)"
    if kind in ("minItems", "maxItems"):
        return f"must hold {'at least' if kind == 'minItems' else 'at most'} {value} item(s), not {_short(error.instance)}"
    if kind == "const":
        return f"must be {_short(value)}"
    if kind == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        known = ", ".join(error.schema.get("properties", {}))
        return f"has unknown field(s) {', '.join(map(repr, extra))} (known: {known})"
    if kind == "required":
        return error.message
    if kind in ("minimum", "maximum"):
        return f"must be {'>=' if kind == 'minimum' else '<='} {value}, not {_short(error.instance)}"
    if kind == "oneOf":
        return f"must be {_EDIT_TEXT['description']} or {{\"edit\": ..., \"enabled\": true}}, not {_short(error.instance)}"
    return error.message.replace("\n", " ")


def current_schema() -> dict:
    """SCHEMA with the attribution methods the table has now (a method registered after import included)."""
    import copy

    schema = copy.deepcopy(SCHEMA)
    _method_entry(schema)["enum"] = list(method_names())
    return schema


def _method_entry(schema: dict) -> dict:
    """The schema of the attribution choice's "method"."""
    return schema["properties"]["attribution"]["properties"]["method"]


def check_session_data(data, name: str) -> None:
    """Raise SpecError naming the first wrong field when `data` does not follow SCHEMA."""
    check_against(current_schema(), data, name)


def check_stored_data(data, name: str) -> None:
    """Raise SpecError naming the first wrong field when a stored map (`attribution.stored`) does not follow
    STORED: the same rule the whole file is checked with, for a stored map read on its own."""
    check_against(STORED, data, name, "attribution.stored")


def check_against(schema: dict, data, name: str, place: str = "") -> None:
    """Raise SpecError naming the first place where `data` does not follow `schema` (`place`: where `data`
    is in a session file)."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match, relevance

    try:
        errors = list(Draft202012Validator(schema).iter_errors(data))
    except RecursionError:
        raise SpecError(f"{name} is nested too deeply to be a session file.") from None
    if not errors:
        return
    # oneOf over an edit: report the edit itself unless it is an object with a wrong field inside
    error = best_match(errors, key=relevance)
    if error.validator != "oneOf" and len(error.absolute_path) == 2 and error.absolute_path[0] == "edits":
        parent = next((e for e in errors if e.validator == "oneOf"), None)
        if parent is not None and not isinstance(parent.instance, dict):
            error = parent
    where = _where([*([place] if place else []), *error.absolute_path])
    raise SpecError(f"{name} is not a valid session: {where} {_reason(error)}.")
