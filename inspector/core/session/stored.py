"""A map kept in a session file: the Attribution tab's last map, its curves and baseline, written inside the
session's JSON (arrays as base64 `.npy` bytes, read back without pickle), so the one file is written whole or
not at all and a session opens with its map on screen without computing it again (IG on a ViT takes seconds).
"""

from __future__ import annotations

import base64
import binascii
import io
import math
from tokenize import TokenError

import numpy as np
from numpy.lib import format as npy_format

from ..attribution.record import Attribution
from ..attribution.scores.faithfulness import Curve
from ..common.errors import SpecError
from ..records.detections import Detection
from .schema import check_stored_data

_PLAIN = (str, int, float, bool, type(None))


def _array_text(array: np.ndarray) -> str:
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


#: The most bytes an array kept in a session may hold (a 3 x 4096 x 4096 float64 map is 403 MB): a larger
#: one, or a header declaring one, is refused before anything is decoded or allocated.
MAX_ARRAY_BYTES = 2**29
_HEADER_LIMIT = 10_000  # numpy's own limit for a header read without trust


def _array(text, what: str, name: str = "The session", dims: tuple[int, ...] = (2, 3)) -> np.ndarray:
    """The float array kept as base64 `.npy` `text`: its header is read and checked first (a float dtype,
    `dims` dimensions none of them empty, exactly as many bytes as the header declares, at most
    MAX_ARRAY_BYTES); only then are its values read, without pickle. A SpecError in one line otherwise."""
    def refuse(why: str) -> SpecError:
        return SpecError(f"{name}: the stored {what} {why}.")

    if not isinstance(text, str):
        raise refuse(f"is not base64 .npy text ({type(text).__name__})")
    if len(text) > (MAX_ARRAY_BYTES + _HEADER_LIMIT) * 4 // 3 + 4:
        raise refuse(f"is {len(text):,} characters of base64, more than an array of at most "
                     f"{MAX_ARRAY_BYTES:,} bytes takes")
    try:
        raw = base64.b64decode(text, validate=True)
    except (ValueError, binascii.Error):
        raise refuse("is not base64 text") from None
    if not raw:
        raise refuse("is empty")
    file = io.BytesIO(raw)
    try:
        version = npy_format.read_magic(file)
        read = {(1, 0): npy_format.read_array_header_1_0, (2, 0): npy_format.read_array_header_2_0}.get(version)
        if read is None:
            raise ValueError(f"version {version}")
        shape, fortran, dtype = read(file, max_header_size=_HEADER_LIMIT)
    except (ValueError, TypeError, SyntaxError, TokenError, OverflowError, RecursionError, KeyError, IndexError):
        raise refuse("is not a .npy array (its header cannot be read)") from None
    if dtype.kind != "f" or dtype.fields is not None or dtype.subdtype is not None or dtype.itemsize > 8:
        raise refuse(f"holds {dtype} values; a map holds floats (float16, float32 or float64)")
    if len(shape) not in dims:
        kinds = " or ".join(f"{d}-D" for d in dims)
        raise refuse(f"has the shape {shape}; it is {kinds}")
    if 0 in shape:
        raise refuse(f"has the shape {shape}, with no values")
    declared = math.prod(shape) * dtype.itemsize
    held = len(raw) - file.tell()
    if declared > MAX_ARRAY_BYTES:
        raise refuse(f"declares {shape} {dtype} ({declared:,} bytes), more than the {MAX_ARRAY_BYTES:,} an "
                     f"array in a session may hold")
    if declared != held:
        raise refuse(f"declares {shape} {dtype} ({declared:,} bytes) but holds {held:,} bytes")
    values = np.frombuffer(raw, dtype, offset=file.tell()).reshape(shape, order="F" if fortran else "C")
    return np.ascontiguousarray(values, dtype=dtype.newbyteorder("="))


def _plain(value):
    value = value.item() if isinstance(value, np.generic) else value
    return value if isinstance(value, _PLAIN) else str(value)


def stored_of(found: Attribution) -> dict:
    """What a session keeps of `found` (JSON-ready)."""
    out = {"method": found.method, "sign": found.shown_sign, "target": found.target, "target_index": found.target_index,
           "layer": found.layer, "map": _array_text(found.map), "details": [[k, _plain(v)] for k, v in found.details],
           "notes": list(found.notes), "warnings": list(found.warnings),
           "curves": [{"metric": c.metric, "auc": float(c.auc), "score_of": c.score_of, "order": c.order,
                       "scores": [float(v) for v in c.scores], "protocol": c.protocol,
                       "settings": [[k, _plain(v)] for k, v in c.settings], "at": [float(v) for v in c.at]}
                      for c in found.curves]}
    if found.completeness_gap is not None:
        out["completeness_gap"] = float(found.completeness_gap)
    if found.baseline is not None:
        out["baseline"] = _array_text(found.baseline)
    if found.detections is not None:
        out["detections"] = [d.to_dict() for d in found.detections]
        out["target_detection"] = found.target_detection
    return out


def attribution_of(stored, name: str = "The session") -> Attribution:
    """The Attribution a session kept, every field checked first (the schema's STORED, then its arrays:
    see `_array`); a SpecError in one line saying what is wrong with it otherwise."""
    check_stored_data(stored, name)
    found = _array(stored["map"], "map", name)
    baseline = _array(stored["baseline"], "baseline", name, (3,)) if "baseline" in stored else None
    if baseline is not None and baseline.shape[1:] != found.shape[-2:]:
        raise SpecError(f"{name}: the stored baseline {baseline.shape} is not the size of the map {found.shape}.")
    detections = stored.get("detections")
    rank = stored.get("target_detection")
    if rank is not None and (detections is None or rank >= len(detections)):
        raise SpecError(f"{name}: the stored map explains box {rank}, but it keeps "
                        f"{len(detections or ())} box(es).")
    if detections is not None:
        if not all(math.isfinite(v) for d in detections for v in (*d["box"], d["score"])):
            raise SpecError(f"{name}: a stored box or its score is not a finite number.")
        detections = tuple(Detection(tuple(float(v) for v in d["box"]), int(d["label"]), d["name"],
                                     float(d["score"])) for d in detections)
    curves = tuple(Curve(c["metric"], np.asarray(c["scores"], np.float64), float(c["auc"]), c["score_of"],
                         c.get("order", ""), c.get("protocol", ""), tuple((k, v) for k, v in c.get("settings", ())),
                         tuple(float(v) for v in c.get("at", ()))) for c in stored.get("curves", ()))
    gap, index = stored.get("completeness_gap"), stored.get("target_index")
    return Attribution(stored["method"], found, stored.get("target", ""), None if index is None else int(index),
                       stored.get("layer"), warnings=tuple(stored.get("warnings", ())),
                       details=tuple((k, v) for k, v in stored.get("details", ())),
                       completeness_gap=None if gap is None else float(gap), baseline=baseline, curves=curves,
                       notes=tuple(stored.get("notes", ())), detections=detections,
                       target_detection=None if rank is None else int(rank), sign=stored.get("sign"))


def check_fits(found: Attribution, input_shape) -> Attribution:
    """`found` when its map is the size of the model's input (`input_shape`, batch first: (1, C, H, W)): an
    (H, W) map, or a (C, H, W) one of the input's channels; a SpecError in one line otherwise. Inputs that are
    not pictures (fewer than three dimensions) are not compared."""
    if input_shape is None or len(input_shape) < 3:
        return found
    channels, size = int(input_shape[-3]), tuple(int(v) for v in input_shape[-2:])
    shape = found.map.shape
    if shape[-2:] != size or (len(shape) == 3 and shape[0] not in (1, channels)):
        raise SpecError(f"The session's map is {' x '.join(map(str, shape))}, but the model's input is "
                        f"{channels} x {size[0]} x {size[1]}: it was made for another model or input.")
    return found
