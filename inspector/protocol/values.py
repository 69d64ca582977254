"""Values as JSON: the project's records, numbers, texts and containers, with arrays set aside as frames.

The JSON form is plain where JSON has the type (null, true/false, integers, finite floats, texts, lists) and
tagged, one key starting with `$`, where it has not:

    {"$float": "NaN" | "Infinity" | "-Infinity"}    a non-finite float
    {"$tuple": [...]}, {"$set": [...]}              a tuple, a frozenset
    {"$dict": [[key, value], ...]}                  a dict (its keys any value here)
    {"$bytes": "base64"}                            bytes
    {"$scalar": "float32", "value": 1.5}            a NumPy scalar, its dtype kept
    {"$array": 3}                                   the message's fourth array frame
    {"$record": "RunRequest", "fields": {...}}      a record of the allowlist (`registry`)

`encode` turns a value into that form and appends its arrays to a list; `decode` does the reverse, checking
every node as it goes, so a message never builds anything but these.
"""

from __future__ import annotations

import base64
import dataclasses
import math
from typing import Any

import numpy as np

from . import registry
from .checks import CHECKS
from .errors import ProtocolError

MAX_DEPTH = 64  # records nest a dozen deep; a deeper message is refused before Python's recursion limit

_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
#: The records met so far, each by its class: (its name in the allowlist, its fields) to write it, and by its name:
#: (its class, its fields, its check) to read it. Filled as they first cross (the allowlist is fixed).
_WRITTEN: dict[type, tuple[str, tuple[str, ...]]] = {}
_READ: dict[str, tuple[type, frozenset, Any]] = {}


def encode(value: Any, arrays: list[np.ndarray], depth: int = 0) -> Any:
    """`value` as JSON-ready data; each NumPy array is appended to `arrays` and named by its index there."""
    if depth > MAX_DEPTH:
        raise ProtocolError(f"A value nested more than {MAX_DEPTH} deep cannot be sent.")
    # The kinds a run's outcome is made of, by their exact type (a result holds thousands of records); any other
    # value, a subclass too, takes the full walk below, which writes the same text.
    kind = type(value)
    if kind is str or kind is bool or kind is int or value is None:
        return value
    if kind is float and math.isfinite(value):
        return value
    layout = _WRITTEN.get(kind)
    if layout is not None:
        return _written(value, layout, arrays, depth)
    if kind is list:
        return [encode(v, arrays, depth + 1) for v in value]
    if kind is tuple:
        return {"$tuple": [encode(v, arrays, depth + 1) for v in value]}
    return _encode(value, arrays, depth)


def _encode(value: Any, arrays: list[np.ndarray], depth: int) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int) and not isinstance(value, np.integer):
        return int(value)  # an IntEnum or bool subclass as its number
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$float": "NaN" if math.isnan(value) else
                                                   ("Infinity" if value > 0 else "-Infinity")}
    if isinstance(value, np.ndarray):
        arrays.append(value)
        return {"$array": len(arrays) - 1}
    if isinstance(value, np.generic):
        if value.dtype.kind not in "biuf":
            raise ProtocolError(f"A NumPy {value.dtype} scalar cannot be sent.")
        return {"$scalar": value.dtype.name, "value": encode(value.item(), arrays, depth + 1)}
    if isinstance(value, list):
        return [encode(v, arrays, depth + 1) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return {"$tuple": [encode(v, arrays, depth + 1) for v in value]}
    if isinstance(value, (set, frozenset)):
        items = [encode(v, arrays, depth + 1) for v in value]
        return {"$set": sorted(items, key=repr)}  # one order: the same set, the same text
    if isinstance(value, dict):
        return {"$dict": [[encode(k, arrays, depth + 1), encode(v, arrays, depth + 1)] for k, v in value.items()]}
    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        layout = registry.name_of(type(value)), tuple(f.name for f in dataclasses.fields(value) if f.init)
        _WRITTEN[type(value)] = layout  # (a class that comes this far always does: its next ones go the short way)
        return _written(value, layout, arrays, depth)
    raise ProtocolError(f"A {type(value).__module__}.{type(value).__qualname__} cannot be sent: the protocol "
                        f"carries records, numbers, texts, containers and NumPy arrays.")


def _written(record: Any, layout: tuple[str, tuple[str, ...]], arrays: list[np.ndarray], depth: int) -> dict:
    name, fields = layout
    return {"$record": name, "fields": {field: encode(getattr(record, field), arrays, depth + 1) for field in fields}}


def decode(node: Any, arrays: list[np.ndarray], depth: int = 0) -> Any:
    """The value `node` (from `encode`, read back from JSON) stands for; `arrays` the message's frames."""
    if depth > MAX_DEPTH:
        raise ProtocolError(f"A value nested more than {MAX_DEPTH} deep is refused.")
    kind = type(node)  # what json.loads makes, by exact type first (a result holds thousands of records)
    if kind is str or kind is int or kind is bool or node is None:
        return node
    if kind is dict and len(node) == 2 and "$record" in node and "fields" in node:
        return _record(node["$record"], node["fields"], arrays, depth)
    if kind is list:
        return [decode(v, arrays, depth + 1) for v in node]
    if node is None or isinstance(node, (bool, str)):
        return node
    if isinstance(node, int):
        return node
    if isinstance(node, float):
        if not math.isfinite(node):
            raise ProtocolError("A non-finite number travels as {\"$float\": ...}, not bare.")
        return node
    if isinstance(node, list):
        return [decode(v, arrays, depth + 1) for v in node]
    if not isinstance(node, dict):
        raise ProtocolError(f"A {type(node).__name__} is not a value of the protocol.")
    tags = [k for k in node if isinstance(k, str) and k.startswith("$")]
    if len(tags) != 1:
        raise ProtocolError(f"A JSON object of the protocol has one $-tag, not {sorted(map(str, node))}.")
    tag = tags[0]
    rest = set(node) - {tag}
    inner = node[tag]
    if tag == "$float" and not rest:
        if inner not in _FLOATS:
            raise ProtocolError(f"$float is NaN, Infinity or -Infinity, not {inner!r}.")
        return _FLOATS[inner]
    if tag in ("$tuple", "$set") and not rest:
        if not isinstance(inner, list):
            raise ProtocolError(f"{tag} holds a list.")
        items = [decode(v, arrays, depth + 1) for v in inner]
        if tag == "$tuple":
            return tuple(items)
        try:
            return frozenset(items)
        except TypeError:
            raise ProtocolError("A $set holds values that can be in a set (no lists or dicts).") from None
    if tag == "$dict" and not rest:
        if not isinstance(inner, list) or not all(isinstance(p, list) and len(p) == 2 for p in inner):
            raise ProtocolError("$dict holds a list of [key, value] pairs.")
        try:
            return {decode(k, arrays, depth + 1): decode(v, arrays, depth + 1) for k, v in inner}
        except TypeError:
            raise ProtocolError("A $dict key must be a value that can be a key (no lists or dicts).") from None
    if tag == "$bytes" and not rest:
        try:
            return base64.b64decode(inner, validate=True)
        except (TypeError, ValueError):
            raise ProtocolError("$bytes holds base64 text.") from None
    if tag == "$scalar" and rest == {"value"}:
        value = node["value"]
        return _scalar(inner, decode(value, arrays, depth + 1) if isinstance(value, dict) else value)
    if tag == "$array" and not rest:
        if isinstance(inner, bool) or not isinstance(inner, int) or not 0 <= inner < len(arrays):
            raise ProtocolError(f"$array {inner!r} names no frame of this message ({len(arrays)} came).")
        return arrays[inner]
    if tag == "$record" and rest == {"fields"}:
        return _record(inner, node["fields"], arrays, depth)
    raise ProtocolError(f"Unknown tag {tag!r} (or its keys {sorted(rest)}) in a value.")


def _scalar(dtype: Any, value: Any) -> np.generic:
    try:
        kind = np.dtype(dtype) if isinstance(dtype, str) else None
    except TypeError:
        kind = None
    if kind is None or kind.kind not in "biuf" or not isinstance(value, (bool, int, float)):
        raise ProtocolError(f"$scalar is a bool, integer or float dtype and a number, not {dtype!r}, {value!r}.")
    try:
        return kind.type(value)
    except (OverflowError, ValueError):
        raise ProtocolError(f"{value!r} is not a {kind.name}.") from None


def _record(name: Any, fields: Any, arrays: list[np.ndarray], depth: int) -> Any:
    read = _READ.get(name) if isinstance(name, str) else None
    if read is None:
        cls = registry.record_class(name)
        read = _READ[name] = cls, frozenset(f.name for f in dataclasses.fields(cls) if f.init), CHECKS.get(name)
    cls, known, check = read
    if not isinstance(fields, dict):
        raise ProtocolError(f"A {name}'s fields are a JSON object.")
    if not known.issuperset(fields):
        raise ProtocolError(f"A {name} has no field {', '.join(sorted(set(fields) - known))}.")
    values = {key: decode(value, arrays, depth + 1) for key, value in fields.items()}
    try:
        record = cls(**values)
        return record if check is None else check(record)
    except ProtocolError:
        raise
    except Exception as exc:  # noqa: BLE001 - a record's own checks (and its parser's) refuse what it cannot hold
        raise ProtocolError(f"A {name} cannot hold those fields: {str(exc).splitlines()[0] if str(exc) else exc!r}") \
            from None
