"""The one schema of a session file (`*.inspector.json`), checked whole before anything is read from it.

JSON Schema (draft 2020-12), checked with `jsonschema`: a wrong field is named by its place in the
file (`edits[0]`, `model.seed`) before any model loads or any value is used.
"""

from __future__ import annotations

from ..errors import SpecError
from ..keys import SITE_CHOICES
from ..records.methods import METRICS, method_names

_STRING = {"type": "string"}
_EDIT_TEXT = {"type": "string", "description": "an edit written KEY=OP(ARGS), e.g. relu1:grad_input=clamp(min=0)"}

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
                "weights": {"type": ["string", "null"]},
                "seed": {},  # any value here: inspector.core.sources.seeds.check_seed is the one rule for seeds
            },
        },
        "input": _STRING,
        "device": _STRING,
        "target": {"type": ["string", "integer"]},
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
                "layer": {"type": ["string", "null"]},
                "options": {"type": "object"},
                "metrics": {"type": "array", "items": {"enum": list(METRICS)}},
                "stored": {"type": "object", "description": "the map made for this choice (core.session.stored)"},
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

    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _reason(error) -> str:
    """What is wrong, in words (jsonschema's own message for the rarer cases)."""
    kind, value = error.validator, error.validator_value
    if kind == "type":
        wanted = [value] if isinstance(value, str) else value
        return f"must be {' or '.join(_TYPE_WORDS.get(w, w) for w in wanted)}, not {_short(error.instance)}"
    if kind == "enum":
        return f"must be one of {', '.join(map(str, value))}, not {_short(error.instance)}"
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
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match, relevance

    errors = list(Draft202012Validator(current_schema()).iter_errors(data))
    if not errors:
        return
    # oneOf over an edit: report the edit itself unless it is an object with a wrong field inside
    error = best_match(errors, key=relevance)
    if error.validator != "oneOf" and len(error.absolute_path) == 2 and error.absolute_path[0] == "edits":
        parent = next((e for e in errors if e.validator == "oneOf"), None)
        if parent is not None and not isinstance(parent.instance, dict):
            error = parent
    where = _where(error.absolute_path)
    raise SpecError(f"{name} is not a valid session: {where} {_reason(error)}.")
