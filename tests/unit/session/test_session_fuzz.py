"""Issue 40, item 11: damaged session files, made the way a tester makes them (seeded): truncated, bits flipped
in the JSON and in the base64 `.npy` arrays, every field given each wrong kind, huge and odd `.npy` headers,
NUL bytes, deep nesting, maps of every wrong dtype and shape. `load_session` either gives a Session whose
stored map the Attribution view can draw, or raises an InspectorError in one line: never anything else."""

from __future__ import annotations

import base64
import copy
import io
import json
import random
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from inspector.core import InspectorError
from inspector.core.attribution.record import Attribution
from inspector.core.attribution.scores.faithfulness import Curve
from inspector.core.records.detections import Detection
from inspector.core.records.signs import picture_of
from inspector.core.session.file import Session, load_session
from inspector.core.session.stored import attribution_of, stored_of

SEED = 40
#: How many damaged sessions the fuzz makes (docs/reference/sessions.md states it).
CASES = 1012


def _npy(array, allow_pickle=False) -> str:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=allow_pickle)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _npy_header(shape, descr="<f4", fortran=False, data=b"", pad=0) -> str:
    """A hand-written .npy (version 1.0) declaring `shape`, with `data` after it."""
    header = repr({"descr": descr, "fortran_order": fortran, "shape": shape}) + " " * pad
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    raw = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode("latin1") + data
    return base64.b64encode(raw).decode("ascii")


def _good() -> dict:
    rng = np.random.default_rng(SEED)
    found = Attribution("occlusion", rng.standard_normal((3, 16, 16)).astype(np.float32), "class 3", 3, None,
                        warnings=("w",), details=(("window", 4), ("baseline", "blur")), completeness_gap=0.5,
                        baseline=rng.standard_normal((3, 16, 16)).astype(np.float32),
                        curves=(Curve("deletion", np.linspace(1, 0, 5), 0.5, "probability of class 3", "hottest"),),
                        notes=("n",), detections=(Detection((1.0, 2.0, 9.0, 12.0), 3, "star", 0.9),),
                        target_detection=0, sign="absolute")
    session = Session(model="demo", weights="random", input="sample:star", layers=("conv1", "fc"),
                      edits=(), seed=7, attribution={"method": "occlusion", "target": "3", "layer": None,
                                                      "options": {"window": 4, "baseline": "blur"}, "metrics": ["deletion"],
                                                      "stored": stored_of(found)})
    data = session.to_dict()
    data["edits"] = ["conv1:output=zero()", {"edit": "fc:output=scale(k=2)", "enabled": False}]
    data["extra"] = {"note": "kept"}
    return data


#: Every field of a session file, by its place (a key path).
FIELDS = [
    ("format",), ("version",), ("model",), ("model", "source"), ("model", "weights"), ("model", "seed"), ("input",),
    ("device",), ("target",), ("layers",), ("layers", 0), ("sites",), ("sites", 0), ("input_grad",), ("edits",),
    ("edits", 0), ("edits", 1), ("edits", 1, "edit"), ("edits", 1, "enabled"), ("extra",), ("attribution",),
    ("attribution", "method"), ("attribution", "target"), ("attribution", "layer"), ("attribution", "options"),
    ("attribution", "metrics"), ("attribution", "stored"), ("attribution", "options", "window"),
    ("attribution", "options", "baseline"),
] + [("attribution", "stored", *rest) for rest in (
    ("method",), ("sign",), ("target",), ("target_index",), ("layer",), ("map",), ("details",), ("details", 0),
    ("details", 0, 0), ("notes",), ("notes", 0), ("warnings",), ("curves",), ("curves", 0), ("curves", 0, "metric"),
    ("curves", 0, "scores"), ("curves", 0, "auc"), ("curves", 0, "score_of"), ("curves", 0, "order"),
    ("completeness_gap",), ("baseline",), ("detections",), ("detections", 0), ("detections", 0, "box"),
    ("detections", 0, "label"), ("detections", 0, "name"), ("detections", 0, "score"), ("target_detection",),
)]
#: The wrong values a tester tries (HUGE: a 5000-digit number, written into the JSON text as it is).
HUGE = "HUGE-NUMBER"
WRONG = [None, "", -1, 0, 2.5, float("nan"), float("inf"), 10**20, [], {}, True, "x\x00y", "a" * 300, HUGE]


def _set(data: dict, where: tuple, value) -> dict:
    data = copy.deepcopy(data)
    inner = data
    for part in where[:-1]:
        inner = inner[part]
    inner[where[-1]] = value
    return data


def _text(data) -> str:
    return json.dumps(data).replace(json.dumps(HUGE), "9" * 5000)


def _cases() -> list[tuple[str, bytes]]:
    rng = random.Random(SEED)
    good = _good()
    text = _text(good).encode()
    cases = [("good", text)]
    for cut in sorted(rng.sample(range(1, len(text)), 40)):  # truncated
        cases.append((f"truncated at {cut}", text[:cut]))
    for _ in range(40):  # a bit flipped anywhere in the file
        at, bit = rng.randrange(len(text)), rng.randrange(8)
        flipped = bytearray(text)
        flipped[at] ^= 1 << bit
        cases.append((f"bit {bit} of byte {at} flipped", bytes(flipped)))
    stored = good["attribution"]["stored"]
    for name in ("map", "baseline"):  # a bit flipped in the .npy inside the base64
        raw = base64.b64decode(stored[name])
        for _ in range(30):
            at = rng.randrange(128) if rng.random() < 0.8 else rng.randrange(len(raw))
            bit = rng.randrange(8)
            flipped = bytearray(raw)
            flipped[at] ^= 1 << bit
            cases.append((f"{name}'s .npy bit {bit} of byte {at} flipped",
                          _text(_set(good, ("attribution", "stored", name), base64.b64encode(flipped).decode()))))
    for where in FIELDS:  # each field, each wrong value
        for value in WRONG:
            cases.append((f"{'.'.join(map(str, where))} = {str(value)[:12]!r}", _text(_set(good, where, value))))
    data16 = np.zeros((3, 16, 16), np.float32).tobytes()
    odd_maps = {
        "(10**13,)": _npy_header((10**13,)), "(10**6, 10**6)": _npy_header((10**6, 10**6)),
        "(2**62, 2)": _npy_header((2**62, 2)), "(-1, 16)": _npy_header((-1, 16)),
        "(3, 16, 16) with no data": _npy_header((3, 16, 16)),
        "(3, 16, 16) fortran": _npy_header((3, 16, 16), fortran=True, data=data16),
        "(3, 16, 16) with too much data": _npy_header((3, 16, 16), data=data16 * 2),
        "a 60000-byte header": _npy_header((3, 16, 16), data=data16, pad=60000),
        "an object dtype": _npy(np.array([{"a": 1}], dtype=object), allow_pickle=True),
        "a text dtype": _npy(np.full((16, 16), "abc")), "a bytes dtype": _npy(np.full((16, 16), b"abc")),
        "a structured dtype": _npy(np.zeros((16, 16), [("a", "<f4"), ("b", "<i4")])),
        "an int dtype": _npy(np.zeros((16, 16), np.int64)), "a bool dtype": _npy(np.zeros((16, 16), bool)),
        "a complex dtype": _npy(np.zeros((16, 16), np.complex64)), "a datetime dtype": _npy(np.zeros(4, "M8[s]")),
        "0-d": _npy(np.float32(1.0)), "1-d": _npy(np.zeros(16, np.float32)),
        "4-D": _npy(np.zeros((1, 3, 16, 16), np.float32)), "6-D": _npy(np.zeros((1,) * 4 + (16, 16), np.float32)),
        "(0, 16)": _npy(np.zeros((0, 16), np.float32)), "(3, 16, 0)": _npy(np.zeros((3, 16, 0), np.float32)),
        "a subarray dtype": _npy_header((16, 16), descr=("<f4", (2,)), data=b"\0" * 2048),
        "an unknown descr": _npy_header((16, 16), descr="<q9", data=b"\0" * 2048),
        "not an npy": base64.b64encode(b"PK\x03\x04" + b"\0" * 100).decode(),
        "version 9 npy": base64.b64encode(b"\x93NUMPY\x09\x00" + b"\0" * 100).decode(),
    }
    for name in ("map", "baseline"):
        for what, value in odd_maps.items():
            cases.append((f"{name}: {what}", _text(_set(good, ("attribution", "stored", name), value))))
    for where in (("input",), ("model", "source"), ("model", "weights"), ("device",), ("layers", 0), ("edits", 0),
                  ("attribution", "target"), ("attribution", "stored", "method"), ("attribution", "stored", "notes", 0),
                  ("attribution", "stored", "layer")):  # a NUL byte inside a real value
        cases.append((f"NUL in {'.'.join(map(str, where))}", _text(_set(good, where, "conv1\x00.py"))))
    for depth in (50, 100_000):  # deep nesting
        deep = "[" * depth + "]" * depth
        for where in (("extra",), ("model",), ("attribution", "options"), ("attribution", "stored", "details")):
            marked = _text(_set(good, where, HUGE)).replace("9" * 5000, deep)
            cases.append((f"{depth} lists deep at {'.'.join(map(str, where))}", marked.encode()))
    cases.append(("a UTF-16 file", _text(good).encode("utf-16")))
    cases.append(("not JSON at all", b"\x00\xff" * 100))
    cases.append(("empty", b""))
    return [(name, body.encode() if isinstance(body, str) else body) for name, body in cases]


def _drawable(found: Attribution) -> None:
    """What the Attribution view does with a map: its picture under its sign."""
    assert found.map.dtype.kind == "f" and found.map.ndim in (2, 3) and found.map.size > 0
    assert picture_of(found.map, found.shown_sign).ndim == 2
    assert found.baseline is None or (found.baseline.dtype.kind == "f" and found.baseline.ndim == 3)


def test_damaged_sessions_are_refused_in_one_line_or_load_whole(tmp_path):
    cases = _cases()
    assert len(cases) == CASES
    wrong, refused = {}, 0
    path = tmp_path / "s.inspector.json"
    for name, body in cases:
        path.write_bytes(body)
        try:
            session = load_session(path)
            if session.attribution and "stored" in session.attribution:
                _drawable(attribution_of(session.attribution["stored"]))
            for value in (session.model, session.input, session.device, session.target, *session.layers):
                assert isinstance(value, str) and "\x00" not in value
        except InspectorError as exc:
            refused += 1
            message = str(exc)
            if not message or "\n" in message or len(message) > 400:
                wrong[name] = f"message: {message[:200]!r}"
        except Exception as exc:  # noqa: BLE001 - the point: every other kind is listed
            wrong[name] = f"{type(exc).__name__}: {str(exc)[:150]}"
    assert wrong == {}
    assert refused > CASES * 0.8  # most damage is seen (a few flips land where any value is fine)


def test_the_good_session_loads_with_its_map():
    found = attribution_of(json.loads(_cases()[0][1])["attribution"]["stored"])
    assert found.map.shape == (3, 16, 16) and found.detections[0].name == "star"


def test_a_header_declaring_gigabytes_is_refused_before_any_memory_is_taken(tmp_path):
    """A real limit: the child's address space is what it holds plus 300 MB; the .npy header declares
    (10**5, 10**4) or (3, 20000, 20000) float64 (8 and 9.6 GB) with no data after it."""
    good, paths = _good(), []
    for i, shape in enumerate(((10**5, 10**4), (3, 20_000, 20_000))):
        paths.append(tmp_path / f"huge{i}.inspector.json")
        paths[-1].write_text(_text(_set(good, ("attribution", "stored", "map"), _npy_header(shape, "<f8"))))
    script = textwrap.dedent(f"""
        import resource, sys
        from inspector.core import InspectorError
        from inspector.core.session.file import load_session
        size = int(next(l for l in open('/proc/self/status') if l.startswith('VmSize')).split()[1]) * 1024
        resource.setrlimit(resource.RLIMIT_AS, (size + 300 * 2**20, resource.RLIM_INFINITY))
        for path in {[str(p) for p in paths]!r}:
            try:
                load_session(path)
            except InspectorError as exc:
                print('refused:', exc)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-600:]
    lines = done.stdout.splitlines()
    assert lines == [
        "refused: huge0.inspector.json: the stored map declares (100000, 10000) float64 (8,000,000,000 bytes), "
        "more than the 536,870,912 an array in a session may hold.",
        "refused: huge1.inspector.json: the stored map declares (3, 20000, 20000) float64 (9,600,000,000 bytes), "
        "more than the 536,870,912 an array in a session may hold."], done.stdout


@pytest.mark.parametrize("shape, ok", [((16, 16), True), ((3, 16, 16), True), ((1, 16, 16), True),
                                       ((16, 17), False), ((3, 8, 16), False), ((4, 16, 16), False)])
def test_a_stored_map_must_fit_the_models_input(shape, ok):
    from inspector.core.session.stored import check_fits

    found = Attribution("saliency", np.zeros(shape, np.float32), "", None)
    if ok:
        assert check_fits(found, (1, 3, 16, 16)) is found
    else:
        with pytest.raises(InspectorError, match=r"The session's map is .* the model's input is 3 x 16 x 16"):
            check_fits(found, (1, 3, 16, 16))
