"""Issue 52, item 2: a concepts job's saved state is believed only once it is checked against the job: the images
done are those read and those skipped, their samples fill the cache's rows, the fit's step and arrays are what the
settings make, the cache holds what the state recorded (CRC-32), and the checksum of the arrays and record holds.
Each damage (signed again, as a faulty job would write it, so that the rule is what meets it) is refused in one line
with the --restart hint; before, `done[:] = True` learned on 2 of the 4 images without a word."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from inspector.core import load_model
from inspector.core.folder_jobs import digest
from inspector.core.concepts import ConceptError, learn_concepts
from inspector.core.common.errors import RunCancelled

OPTIONS = dict(k=2, epochs=2, top=2, batch=2, pictures=False)


@pytest.fixture(scope="module")
def demo():
    return load_model("demo")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("concepts-state") / "data"
    folder.mkdir()
    rng = np.random.default_rng(52)
    for i in range(4):
        Image.fromarray(rng.integers(0, 256, (32, 32, 3), dtype=np.uint8)).save(folder / f"{i}.png")
    return folder


def _stopped(demo, data, out: Path, stop, method="nmf") -> Path:
    seen = {}
    more = dict(method="sae", sparsity=1) if method == "sae" else {}
    with pytest.raises(RunCancelled):
        learn_concepts(demo, data, "relu3", out, progress=lambda stage, done, total: seen.update(at=(stage, done)),
                       cancel=lambda: seen.get("at") == stop, **OPTIONS, **more)
    return out


def _change(out: Path, arrays=None, info=None) -> None:
    """The state's arrays and record changed (`arrays`: name -> function of the old array, or None to drop it;
    `info`: a function of the record's info), then signed again."""
    npz, record_file = out / "concepts.partial.npz", out / "concepts.partial.json"
    with np.load(npz) as saved:
        kept = {k: saved[k] for k in saved.files}
    for name, change in (arrays or {}).items():
        if change is None:
            del kept[name]
        else:
            kept[name] = change(kept[name].copy())
    np.savez(npz, **kept)
    record = json.loads(record_file.read_text())
    if info:
        info(record["info"])
    record["digest"] = digest(npz.read_bytes(), record)
    record_file.write_text(json.dumps(record))


def _at(index, value):
    def change(a):
        a[index] = value
        return a
    return change


IN_THE_PASS = {
    "every image marked done": (dict(done=lambda a: a | True), None, "2 of the images done were neither read"),
    "a start moved": (dict(start=_at(1, 5)), None, "do not fill the 128 train rows the state counts"),
    "a height of 0": (dict(height=_at(0, 0)), None, "1 of the images done were neither read"),
    "samples of an image not done": (dict(width=_at(3, 8)), None, "samples are recorded for an image not read"),
    "float starts": (dict(start=lambda a: a.astype(np.float64)), None, "start is float64, not int64"),
    "rows counted past the samples": (None, lambda i: i["rows"].update(train=129), "do not fill the 129 train rows"),
    "a batch past --batch": (None, lambda i: i.update(batch=3), "info: batch must be a whole number from 1 to 2"),
    "a fit's step in the pass": (None, lambda i: i.update(step=1), "come together, in the fit phase"),
    "the fit phase before the pass ends": (None, lambda i: i.update(phase="fit"), "the phase is fit, but 2 images"),
    "a layout no dictionary has": (None, lambda i: i.update(layout="NCWH"), "the layout must be one of NCHW"),
    "a skipped file not in the data": (None, lambda i: i.update(skipped=[{"path": "x.png", "reason": "no"}]),
                                       "names 'x.png', which is not in the data"),
}


@pytest.mark.parametrize("name", list(IN_THE_PASS))
def test_a_damaged_state_in_the_pass_is_refused_in_one_line(demo, data, tmp_path, name):
    arrays, info, says = IN_THE_PASS[name]
    out = _stopped(demo, data, tmp_path / "out", ("pass", 2))
    _change(out, arrays, info)
    with pytest.raises(ConceptError, match=re.escape(says)) as error:
        learn_concepts(demo, data, "relu3", out, **OPTIONS)
    assert "--restart" in str(error.value) and "\n" not in str(error.value)
    assert not (out / "concepts.json").exists() and (out / "concepts.partial.npz").is_file()


IN_THE_FIT = {
    "a step past the fit's": ("nmf", None, lambda i: i.update(step=3), "info: step must be a whole number from 1 to 2"),
    "another batch of samples": ("nmf", None, lambda i: i.update(batch_rows=64), "the fit's batch must be 1024"),
    "negative NMF components": ("nmf", {"fit/components": lambda a: -a}, None, "components holds negative values"),
    "NMF steps not the state's": ("nmf", {"fit/steps": _at(0, 5)}, None, "are not the 1 steps taken"),
    "a NaN encoder": ("sae", {"fit/p/encoder": _at((0, 0), np.nan)}, None, "the fit's p/encoder holds NaN"),
    "an infinite bias moment": ("sae", {"fit/m/encoder_bias": _at(0, np.inf)}, None, "m/encoder_bias holds NaN or inf"),
    "decoder rows not of unit norm": ("sae", {"fit/p/decoder": lambda a: a * 2}, None, "not of unit norm"),
    "a fit's array missing": ("sae", {"fit/v/decoder": None}, None, "its fit lacks v/decoder"),
}


@pytest.mark.parametrize("name", list(IN_THE_FIT))
def test_a_damaged_state_in_the_fit_is_refused_in_one_line(demo, data, tmp_path, name):
    method, arrays, info, says = IN_THE_FIT[name]
    out = _stopped(demo, data, tmp_path / "out", ("fit", 1), method)
    _change(out, arrays, info)
    more = dict(method="sae", sparsity=1) if method == "sae" else {}
    with pytest.raises(ConceptError, match=re.escape(says)) as error:
        learn_concepts(demo, data, "relu3", out, **OPTIONS, **more)
    assert "--restart" in str(error.value) and "\n" not in str(error.value)


def test_samples_changed_in_the_cache_are_refused_by_their_crc(demo, data, tmp_path):
    out = _stopped(demo, data, tmp_path / "out", ("fit", 1))
    cache = out / "concepts.cache" / "train.f32"
    raw = bytearray(cache.read_bytes())
    raw[100] ^= 1
    cache.write_bytes(bytes(raw))
    with pytest.raises(ConceptError, match=r"the samples in concepts.cache/train.f32 changed after the job saved them "
                                           r"\(CRC-32 \d+, the state's \d+\)"):
        learn_concepts(demo, data, "relu3", out, **OPTIONS)


def test_a_state_changed_without_its_checksum_is_refused(demo, data, tmp_path):
    """The fit's components scaled by 2 keep every rule (finite, not negative): the checksum refuses them."""
    out = _stopped(demo, data, tmp_path / "out", ("fit", 1))
    npz = out / "concepts.partial.npz"
    with np.load(npz) as saved:
        kept = {k: saved[k] for k in saved.files}
    kept["fit/components"] = kept["fit/components"] * 2
    np.savez(npz, **kept)
    with pytest.raises(ConceptError, match="its checksum does not match"):
        learn_concepts(demo, data, "relu3", out, **OPTIONS)


# -- issue 52, item 4: one folder, one kind of job -----------------------------------------------------------------
def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_concepts_are_refused_in_an_atlas_folder_and_an_atlas_in_a_concepts_folder(demo, data, tmp_path):
    """Before, concepts --out ATLAS overwrote its thumbnails/regions.json (every argmax box lost), and the atlas
    the concepts' thumbnails. Each is refused in one line, nothing written, with --restart too."""
    from inspector.core.atlas import run_atlas
    from inspector.core.common.errors import AtlasError

    atlas, concepts = tmp_path / "atlas", tmp_path / "concepts"
    run_atlas(demo, data, "relu3", 2, atlas, batch=2)
    learn_concepts(demo, data, "relu3", concepts, **{**OPTIONS, "pictures": True})
    kept = {atlas: _files(atlas), concepts: _files(concepts)}
    assert "thumbnails/regions.json" in kept[atlas] and "thumbnails/regions.json" in kept[concepts]
    for restart in (False, True):
        with pytest.raises(ConceptError) as error:
            learn_concepts(demo, data, "relu3", atlas, restart=restart, **{**OPTIONS, "pictures": True})
        assert str(error.value) == (f"{atlas} holds an atlas (atlas.job.json), not concepts: a folder holds one "
                                    f"kind of job; choose another --out for the concepts.")
        with pytest.raises(AtlasError) as error:
            run_atlas(demo, data, "relu3", 2, concepts, batch=2, restart=restart)
        assert str(error.value) == (f"{concepts} holds concepts (concepts.job.json), not an atlas: a folder holds "
                                    f"one kind of job; choose another --out for the atlas.")
    assert _files(atlas) == kept[atlas] and _files(concepts) == kept[concepts]


# -- issue 52, item 6: bounded and checked arguments ----------------------------------------------------------------
@pytest.mark.parametrize("more, says", [
    (dict(restart="yes"), "learn_concepts(): restart must be bool, not 'yes'."),
    (dict(restart=1), "learn_concepts(): restart must be bool, not 1."),
    (dict(epochs=0), "--epochs must be a whole number of at least 1, not 0."),
    (dict(epochs=True), "--epochs must be a whole number of at least 1, not True."),
    (dict(epochs=1001), "--epochs 1001 is more than 1000, the most passes over the samples"),
    (dict(top=101), "--top 101 is more than 100, the most images kept per channel"),
    (dict(k=True), "--k must be a whole number of at least 1, not True."),
    (dict(max_memory_mb=float("inf")), "--max-memory is a number of MB above 0 and below 2**63 bytes "
                                        "(8,796,093,022,208 MB), not inf."),
])
def test_learn_concepts_arguments_are_bounded_and_of_their_kind(demo, data, tmp_path, more, says):
    """A resume's `restart` took any truthy value, --epochs 0 ran the default silently, --epochs 2**63 grew memory by
    878 MB in 120 s: each is one line now, and nothing is written."""
    from inspector.core.common.errors import SpecError

    with pytest.raises(SpecError) as error:
        learn_concepts(demo, data, "relu3", tmp_path / "out", **{**OPTIONS, **more})
    assert str(error.value).startswith(says) and "\n" not in str(error.value)
    assert not (tmp_path / "out").exists()


def test_the_atlas_top_is_bounded(demo, data, tmp_path):
    from inspector.core.atlas import run_atlas

    from inspector.core.common.errors import SpecError

    with pytest.raises(SpecError, match=r"^--top 101 is more than 100, the most images kept per channel"):
        run_atlas(demo, data, "relu3", 101, tmp_path / "out")
    assert not (tmp_path / "out").exists()


# -- a finished folder: its record is read back by the same command (the table) and by the app ----------------------
@pytest.mark.parametrize("edit, says", [
    (lambda r: r["fit"].update(variance_explained="x"), "its fit's figures are not numbers of a fit"),
    (lambda r: r["fit"].update(never_active=[7]), "its fit's figures are not numbers of a fit"),
    (lambda r: r.update(k=True), "its layer, method or K is not one a job writes"),
    (lambda r: r.update(channels=-1), "its layout, channels or image count is not one a job writes"),
    (lambda r: r["data"].update(skipped=[5]),
     "its data (root, skipped files, held-out images) is not a listing a job writes"),
    (lambda r: r["concepts"].pop(), "it lists 1 concepts for K=2"),
    (lambda r: r["concepts"][1].update(id=0), "concept 1 is not a concept's id, figures and top images"),
    (lambda r: r["concepts"][0]["top"][0].update(y=-1), "concept 0 is not a concept's id, figures and top images"),
])
def test_a_damaged_finished_record_is_refused_in_one_line(demo, data, tmp_path, edit, says):
    """Before, the same command on a finished folder whose concepts.json held a figure that is not a number printed
    a traceback from its table (ValueError: Unknown format code 'f')."""
    from inspector.core.concepts import read_record

    out = tmp_path / "out"
    learn_concepts(demo, data, "relu3", out, **OPTIONS)
    record = json.loads((out / "concepts.json").read_text())
    edit(record)
    (out / "concepts.json").write_text(json.dumps(record))
    for call in (lambda: read_record(out), lambda: learn_concepts(demo, data, "relu3", out, **OPTIONS)):
        with pytest.raises(ConceptError) as error:
            call()
        assert str(error.value) == f"{out / 'concepts.json'} is damaged: {says}."
