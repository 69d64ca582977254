"""A map kept in a session file: the Attribution tab's last map, its curves and baseline, written inside the
session's JSON (arrays as base64 `.npy` bytes, read back without pickle), so the one file is written whole or
not at all and a session opens with its map on screen without computing it again (IG on a ViT takes seconds).
"""

from __future__ import annotations

import base64
import binascii
import io

import numpy as np

from ..attribution.record import Attribution
from ..errors import SpecError
from ..attribution.scores.faithfulness import Curve
from ..records.detections import Detection
from ..records.signs import SIGNS

_PLAIN = (str, int, float, bool, type(None))


def _array_text(array: np.ndarray) -> str:
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _array(text, what: str) -> np.ndarray:
    try:
        return np.load(io.BytesIO(base64.b64decode(text, validate=True)), allow_pickle=False)
    except (TypeError, ValueError, binascii.Error, OSError) as exc:
        raise SpecError(f"The session's stored map: its {what} is not a base64 .npy array ({exc}).") from None


def _plain(value):
    value = value.item() if isinstance(value, np.generic) else value
    return value if isinstance(value, _PLAIN) else str(value)


def stored_of(found: Attribution) -> dict:
    """What a session keeps of `found` (JSON-ready)."""
    out = {"method": found.method, "sign": found.shown_sign, "target": found.target, "target_index": found.target_index,
           "layer": found.layer, "map": _array_text(found.map), "details": [[k, _plain(v)] for k, v in found.details],
           "notes": list(found.notes), "warnings": list(found.warnings),
           "curves": [{"metric": c.metric, "auc": float(c.auc), "score_of": c.score_of, "order": c.order,
                       "scores": [float(v) for v in c.scores]} for c in found.curves]}
    if found.completeness_gap is not None:
        out["completeness_gap"] = float(found.completeness_gap)
    if found.baseline is not None:
        out["baseline"] = _array_text(found.baseline)
    if found.detections is not None:
        out["detections"] = [d.to_dict() for d in found.detections]
        out["target_detection"] = found.target_detection
    return out


def attribution_of(stored, name: str = "the session") -> Attribution:
    """The Attribution a session kept; a SpecError saying what is wrong with it otherwise."""
    if not isinstance(stored, dict) or not isinstance(stored.get("method"), str) or "map" not in stored:
        raise SpecError(f"The stored map in {name} needs at least 'method' and 'map'.")
    try:
        curves = tuple(Curve(c["metric"], np.asarray(c["scores"], np.float64), float(c["auc"]), str(c["score_of"]),
                             str(c.get("order", ""))) for c in stored.get("curves", ()))
        sign = stored.get("sign")  # None in sessions from before the sign: the method's default
        if sign is not None and sign not in SIGNS:
            raise SpecError(f"The stored map in {name} has the sign {sign!r}; signs: {', '.join(SIGNS)}.")
        detections = stored.get("detections")
        if detections is not None:
            detections = tuple(Detection(tuple(float(v) for v in d["box"]), int(d["label"]), str(d["name"]),
                                         float(d["score"])) for d in detections)
        details = tuple((str(k), v) for k, v in stored.get("details", ()))
        gap = stored.get("completeness_gap")
        index = stored.get("target_index")
        rank = stored.get("target_detection")
        return Attribution(stored["method"], _array(stored["map"], "map"), str(stored.get("target", "")),
                           None if index is None else int(index), stored.get("layer"),
                           warnings=tuple(map(str, stored.get("warnings", ()))), details=details,
                           completeness_gap=None if gap is None else float(gap),
                           baseline=_array(stored["baseline"], "baseline") if "baseline" in stored else None,
                           curves=curves, notes=tuple(map(str, stored.get("notes", ()))),
                           detections=detections, target_detection=None if rank is None else int(rank), sign=sign)
    except (KeyError, TypeError, ValueError) as exc:
        raise SpecError(f"The stored map in {name} is damaged: {type(exc).__name__} {exc}.") from None
