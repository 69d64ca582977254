"""Issue 52, item 2: the job folders' saved states damaged the way a tester damages them (seeded), as the session
fuzz damages session files: every field of every state file (the atlas's and the concepts' .partial.npz arrays,
their .partial.json records, the job files, the concepts' sample cache) given each wrong kind, NaN and infinities,
negative and out-of-range values, another shape, removed; the files truncated, bits flipped, not JSON, nested
deep. A resume then either refuses in one line with the --restart hint, leaving the folder as it was, or gives
exactly what the uninterrupted job gives.

Each damage is tried twice: as a tester makes it (the state's checksum as the job wrote it), and signed again (its
checksum made anew, as a faulty job would write it): then the rules alone meet it, and a resume still never fails
with anything but one line (a value no rule can check, such as a score, is the checksum's to guard)."""

from __future__ import annotations

import copy
import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from inspector.core import load_model
from inspector.core.atlas import run_atlas
from inspector.core.folder_jobs import digest
from inspector.core.concepts import learn_concepts, load_dictionary
from inspector.core.common.errors import InspectorError, RunCancelled

SEED = 52
#: How many damaged states the fuzz makes (docs/reference/sessions.md states them): the atlas's, and the
#: concepts' in the pass (every file and field) and in the fit (what a fit adds: its arrays and step)
ATLAS_CASES = 496
CONCEPTS_CASES = {("nmf", "pass"): 530, ("nmf", "fit"): 196, ("sae", "fit"): 248}
HUGE = "HUGE-NUMBER"
WRONG = [None, "", -1, 0, 2.5, float("nan"), float("inf"), 10**20, [], {}, True, "x\x00y", "a" * 300, HUGE]
GONE = "(removed)"
ATLAS = dict(layers="conv1", top=2, batch=2, thumbnails=False)
CONCEPTS = dict(layer="relu3", k=2, epochs=2, top=2, batch=2, pictures=False)


# -- the damages ------------------------------------------------------------------------------------------------
def _text(data) -> bytes:
    return json.dumps(data).replace(json.dumps(HUGE), "9" * 5000).encode()


def _fields(value, where=()) -> list[tuple]:
    """Every field's place (a key path) in a JSON value."""
    out = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, inner in items:
        out.append((*where, key))
        out += _fields(inner, (*where, key))
    return out


def _set(data, where: tuple, value):
    data = copy.deepcopy(data)
    inner = data
    for part in where[:-1]:
        inner = inner[part]
    if value is GONE:
        del inner[where[-1]]
    else:
        inner[where[-1]] = value
    return data


def _json_damages(name: str, data: dict, rng: random.Random, values: int | None = None,
                  fields: list[tuple] | None = None, whole: bool = True) -> list[tuple[str, bytes]]:
    """Each field (of `fields`, all where None) given each wrong value (a seeded few of them where `values`) or
    removed; with `whole`, the file truncated, bits flipped, not JSON, empty, UTF-16, nested 100000 lists deep."""
    text = _text(data)
    out = []
    for where in fields if fields is not None else _fields(data):
        chosen = WRONG if values is None else rng.sample(WRONG, values)
        for value in [*chosen, GONE]:
            out.append((f"{name} {'.'.join(map(str, where))} = {str(value)[:12]!r}", _text(_set(data, where, value))))
    if not whole:
        return out
    for cut in sorted(rng.sample(range(1, len(text)), 4)):
        out.append((f"{name} truncated at {cut}", text[:cut]))
    for _ in range(4):
        at, bit = rng.randrange(len(text)), rng.randrange(8)
        flipped = bytearray(text)
        flipped[at] ^= 1 << bit
        out.append((f"{name} bit {bit} of byte {at} flipped", bytes(flipped)))
    deep = _text(_set(data, _fields(data)[0], HUGE)).replace(b"9" * 5000, b"[" * 100_000 + b"]" * 100_000)
    out += [(f"{name} not JSON", b"\x00\xff" * 50), (f"{name} empty", b""),
            (f"{name} in UTF-16", json.dumps(data).encode("utf-16")), (f"{name} nested deep", deep)]
    return out


def _array_damages(name: str, a: np.ndarray, rng: random.Random) -> list[tuple[str, np.ndarray | None]]:
    """One array of a state: removed, of other kinds and shapes, a value set to each odd number (NaN, infinities,
    negative, huge, zero), all of it zero or one, a value moved by one, two values swapped."""
    flat = a.reshape(-1)
    at = rng.randrange(flat.size)
    out = [("removed", None), ("as float64" if a.dtype != np.float64 else "as float32",
                               a.astype(np.float32 if a.dtype == np.float64 else np.float64)),
           ("as int32", a.astype(np.int32)), ("as Python objects", a.astype(object)),
           ("one value fewer", flat[:-1].copy()), ("an axis more", a[None].copy()), ("0-d", flat[at].copy()),
           ("all zero", np.zeros_like(a)), ("all one", np.ones_like(a))]
    odd = ([np.nan, np.inf, -np.inf, -1.0, 1e30] if a.dtype.kind == "f" else
           [-1, 2**40, -(2**40)] if a.dtype.kind == "i" else [not flat[at]])
    for value in odd:
        changed = flat.copy()
        changed[at] = value
        out.append((f"[{at}] = {value}", changed.reshape(a.shape)))
    if a.dtype.kind != "b":
        moved = flat.copy()
        moved[at] = moved[at] + 1
        out.append((f"[{at}] + 1", moved.reshape(a.shape)))
    if flat.size > 1:
        other = (at + 1 + rng.randrange(flat.size - 1)) % flat.size
        swapped = flat.copy()
        swapped[[at, other]] = swapped[[other, at]]
        out.append((f"[{at}] and [{other}] swapped", swapped.reshape(a.shape)))
    return [(f"{name} {label}", value) for label, value in out]


def _npz(arrays: dict[str, np.ndarray]) -> bytes:
    import io

    buffer = io.BytesIO()
    np.savez(buffer, **{k: v for k, v in arrays.items() if v is not None})
    return buffer.getvalue()


def _state_cases(folder: Path, partial: str, rng: random.Random, arrays: list[str] | None = None,
                 fields: list[tuple] | None = None, whole: bool = True, few: tuple[str, ...] = ()
                 ) -> list[tuple[str, dict, bool]]:
    """(what, {file: new bytes or None to remove}, signed) for the damages of the state in `folder`: each of its
    `arrays` (all where None; those starting with one of `few`: a seeded 6 of the damages) and record `fields` (all
    where None) as a tester makes them and signed again (a tester's own values: a seeded 4 of them); with `whole`,
    the job file's fields (a value each), and each file truncated, bits flipped, removed."""
    arrays_file, record_file = f"{partial}.npz", f"{partial}.json"
    with np.load(folder / arrays_file) as saved:
        kept = {k: saved[k] for k in saved.files}
    record = json.loads((folder / record_file).read_text())
    cases = []
    for name in sorted(kept) if arrays is None else arrays:
        damages = _array_damages(name, kept[name], rng)
        for what, value in rng.sample(damages, 6) if name.startswith(few) and few else damages:
            body = _npz({**kept, name: value})
            cases += [(what, {arrays_file: body}, False), (what, {arrays_file: body}, True)]
    for what, body in _json_damages(record_file, record, rng, fields=fields, whole=whole):
        if "digest" not in what:
            cases.append((what, {record_file: body}, True))
    for what, body in _json_damages(record_file, record, rng, 4, fields=fields, whole=False):
        cases.append((what, {record_file: body}, False))
    if not whole:
        return cases
    job_file = next(p.name for p in folder.glob("*.job.json"))
    job = json.loads((folder / job_file).read_text())
    for what, body in _json_damages(job_file, job, rng, 1):
        cases.append((what, {job_file: body}, False))
    raw = (folder / arrays_file).read_bytes()
    for cut in sorted(rng.sample(range(1, len(raw)), 4)):
        cases.append((f"{arrays_file} truncated at {cut}", {arrays_file: raw[:cut]}, False))
    for _ in range(4):
        at = rng.randrange(len(raw)) if rng.random() < 0.5 else rng.randrange(min(len(raw), 600))
        flipped = bytearray(raw)
        flipped[at] ^= 1 << rng.randrange(8)
        cases.append((f"{arrays_file} byte {at} flipped", {arrays_file: bytes(flipped)}, False))
    cases += [(f"{name} removed", {name: None}, False) for name in (arrays_file, record_file, job_file)]
    return cases


def _sign(folder: Path, partial: str) -> None:
    """The record's checksum made again for the arrays and record as they are (as a faulty job would write it)."""
    try:
        record = json.loads((folder / f"{partial}.json").read_text())
        record["digest"] = digest((folder / f"{partial}.npz").read_bytes(), record)
        _write(folder / f"{partial}.json", json.dumps(record).encode())
    except (OSError, ValueError, TypeError, AttributeError, RecursionError):
        pass  # nothing to sign: the record or arrays are not there or not a record


def _listing(folder: Path) -> dict[str, tuple[int, int, int]]:
    """Each file's size, modification time and inode: what tells a file changed (or was replaced), unread."""
    out = {}
    for path in folder.rglob("*"):
        if path.is_file():
            st = path.stat()
            out[str(path.relative_to(folder))] = st.st_size, st.st_mtime_ns, st.st_ino
    return out


def _write(path: Path, body: bytes) -> None:
    """A new file in place of the old one (truncating a file is many times slower than writing a new one on a
    file system mounted with discard)."""
    path.unlink(missing_ok=True)
    path.write_bytes(body)


def _restore(out: Path, good: dict[str, bytes], written: dict, changed) -> None:
    """`out` made the good state's copy again, writing only what the last case changed (`changed`) or the job
    replaced (a file system's create and unlink are most of a case's time); `written`: each file as last restored."""
    now = _listing(out)
    for name in now.keys() - good.keys():
        (out / name).unlink()
    for name, body in good.items():
        if name in changed or name not in now or now[name] != written.get(name):
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            _write(out / name, body)
            st = (out / name).stat()
            written[name] = st.st_size, st.st_mtime_ns, st.st_ino


def _fuzz(good: Path, partial: str, cases, tmp_path: Path, resume, same) -> tuple[dict, int, int]:
    """Each case in a copy of `good`: (what went wrong, refused, finished equal)."""
    wrong, refused, equal = {}, 0, 0
    kept = {str(p.relative_to(good)): p.read_bytes() for p in good.rglob("*") if p.is_file()}
    out, written, changed = tmp_path / "case", {}, set()
    out.mkdir()
    for what, files, signed in cases:
        _restore(out, kept, written, changed)
        changed = set(files) | {f"{partial}.json"}
        for name, body in files.items():
            (out / name).unlink() if body is None else _write(out / name, body)
        if signed:
            _sign(out, partial)
        what = f"{what}{' (signed)' if signed else ''}"
        before = _listing(out)
        contents = {name: (out / name).read_bytes() for name in before}
        try:
            result = resume(out)
        except InspectorError as exc:
            refused += 1
            message = str(exc)
            if "\n" in message or len(message) > 600 or "--restart" not in message:
                wrong[what] = f"message: {message[:300]!r}"
            elif _listing(out) != before and {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*")
                                              if p.is_file()} != contents:
                wrong[what] = "refused, but the folder changed"
        except Exception as exc:  # noqa: BLE001 - the point: every other kind is listed
            wrong[what] = f"{type(exc).__name__}: {str(exc)[:150]}"
        else:
            if same(out, result):
                equal += 1
            elif not signed:
                wrong[what] = "finished with another result than the uninterrupted job's"
    return wrong, refused, equal


# -- the atlas ----------------------------------------------------------------------------------------------------
def images(folder: Path) -> Path:
    """Four 32 x 32 pictures, the second not an image (a skipped file in the first batch)."""
    folder.mkdir(parents=True)
    rng = np.random.default_rng(SEED)
    for i in range(4):
        Image.fromarray(rng.integers(0, 256, (32, 32, 3), dtype=np.uint8)).save(folder / f"{i}.png")
    (folder / "1.png").write_bytes(b"not a picture")
    return folder


@pytest.fixture(scope="module")
def demo():
    return load_model("demo")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return images(tmp_path_factory.mktemp("fuzz") / "data")


def _atlas(demo, data, out, **more):
    return run_atlas(demo, data, ATLAS["layers"], ATLAS["top"], out, batch=ATLAS["batch"],
                     thumbnails=ATLAS["thumbnails"], **more)


def test_damaged_atlas_states_are_refused_in_one_line_or_resume_whole(demo, data, tmp_path):
    whole = _atlas(demo, data, tmp_path / "whole")
    good = tmp_path / "good"
    with pytest.raises(RunCancelled):
        _atlas(demo, data, good, cancel=lambda: True)
    cases = _state_cases(good, "atlas.partial", random.Random(SEED))
    assert len(cases) == ATLAS_CASES

    def same(out, atlas):
        return atlas == whole and json.loads((out / "atlas.json").read_text()) == json.loads(
            json.dumps(whole))

    wrong, refused, equal = _fuzz(good, "atlas.partial", cases, tmp_path, lambda out: _atlas(demo, data, out), same)
    assert wrong == {}
    assert refused > len(cases) * 0.8, (refused, equal)


# -- the concepts -------------------------------------------------------------------------------------------------
def _concepts(demo, data, out, method="nmf", **more):
    options = {**CONCEPTS, **(dict(method="sae", sparsity=1) if method == "sae" else {}), **more}
    return learn_concepts(demo, data, options.pop("layer"), out, **options)


@pytest.mark.parametrize("method, stop", [("nmf", ("pass", 2)), ("nmf", ("fit", 1)), ("sae", ("fit", 1))])
def test_damaged_concepts_states_are_refused_in_one_line_or_resume_whole(demo, data, tmp_path, method, stop):
    whole = _concepts(demo, data, tmp_path / "whole", method)
    components = load_dictionary(tmp_path / "whole").components
    good, seen = tmp_path / "good", {}
    with pytest.raises(RunCancelled):
        _concepts(demo, data, good, method, progress=lambda stage, done, total: seen.update(at=(stage, done)),
                  cancel=lambda: seen.get("at") == stop)
    rng = random.Random(f"{SEED}{method}{stop}")
    if stop[0] == "pass":  # every file and field of a state in the pass
        cases = _state_cases(good, "concepts.partial", rng)
    else:  # what a state in the fit adds: the fit's arrays (the autoencoder's 13: a seeded 6 damages each), its step
        fit = sorted(n for n in np.load(good / "concepts.partial.npz").files if n.startswith("fit/"))
        cases = _state_cases(good, "concepts.partial", rng, fit, [("info", n) for n in ("phase", "batch_rows", "step")],
                             whole=False, few=("fit/m/", "fit/v/", "fit/p/"))
    cache = good / "concepts.cache"
    for split in ("train", "held"):
        raw = (cache / f"{split}.f32").read_bytes()
        if not raw:
            continue  # no held-out sample yet
        for cut in sorted(rng.sample(range(len(raw)), 3)):
            cases.append((f"{split}.f32 cut to {cut} bytes", {f"concepts.cache/{split}.f32": raw[:cut]}, False))
        at = rng.randrange(len(raw))
        flipped = bytearray(raw)
        flipped[at] ^= 1 << rng.randrange(8)
        cases += [(f"{split}.f32 byte {at} flipped", {f"concepts.cache/{split}.f32": bytes(flipped)}, False),
                  (f"{split}.f32 longer", {f"concepts.cache/{split}.f32": raw + b"\x01" * 256}, False),
                  (f"{split}.f32 removed", {f"concepts.cache/{split}.f32": None}, False)]
    assert len(cases) == CONCEPTS_CASES[method, stop[0]]

    def same(out, record):
        return record == whole and torch.equal(load_dictionary(out).components, components)

    wrong, refused, equal = _fuzz(good, "concepts.partial", cases, tmp_path, lambda out: _concepts(
        demo, data, out, method), same)
    assert wrong == {}
    assert refused > len(cases) * 0.8, (refused, equal)
