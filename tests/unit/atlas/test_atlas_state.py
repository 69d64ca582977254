"""Issue 40, item 10: the saved state of an unfinished atlas is believed only once every array has been
checked (kind, shape, ranges, finiteness, and an .npy header's size before anything is read); an
atlas.json with a NUL or a position that is not a whole number is refused in one line; thumbnail_path
stays inside the atlas folder. Damaged files are made as a tester makes them: np.savez with a bad
array, an .npy header written by hand, a folder in place of a file, a NUL in JSON."""

from __future__ import annotations

import io
import json
import re
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from inspector.core import load_model
from inspector.core.atlas import read_atlas, run_atlas, thumbnail_path
from inspector.core.folder_jobs import digest
from inspector.core.atlas.store import PARTIAL
from inspector.core.folder_jobs import LOCK_FILE
from inspector.core.common.errors import AtlasError, RunCancelled, SpecError

CHANNELS = 16  # the demo's conv1
TOP = 2


def images(folder: Path, count: int = 6) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(2)
    for i in range(count):
        Image.fromarray(rng.integers(0, 256, (40, 40, 3), dtype=np.uint8)).save(folder / f"{i}.png")
    return folder


@pytest.fixture(scope="module")
def demo():
    return load_model("demo")


@pytest.fixture(scope="module")
def finished(demo, tmp_path_factory):
    """The demo's conv1 atlas of six images built in one go: what a resumed job must give."""
    root = tmp_path_factory.mktemp("whole")
    return run_atlas(demo, images(root / "data"), "conv1", TOP, root / "atlas", batch=2, thumbnails=False)


def _stopped(demo, tmp_path) -> tuple[Path, Path]:
    """A job cancelled after its first batch (2 of 6 images): its saved state is in the folder."""
    data, out = images(tmp_path / "data"), tmp_path / "atlas"
    with pytest.raises(RunCancelled):
        run_atlas(demo, data, "conv1", TOP, out, batch=2, cancel=lambda: True, thumbnails=False)
    assert (out / f"{PARTIAL}.npz").is_file()
    return data, out


def _rewrite(out: Path, **changes) -> None:
    """The state's arrays with some replaced (a function of the old array, or None to drop it), saved
    again with np.savez as a tester would, and its checksum made again (as a state written by a faulty job would
    have it): what is wrong is found by the rules, not only by the checksum."""
    path = out / f"{PARTIAL}.npz"
    with np.load(path) as arrays:
        kept = {k: arrays[k] for k in arrays.files}
    for name, change in changes.items():
        name = name.replace("__", "/")
        if change is None:
            del kept[name]
        else:
            kept[name] = change(kept[name].copy() if name in kept else None)
    with open(path, "wb") as file:
        np.savez(file, **kept)
    _sign(out)


def _sign(out: Path) -> None:
    """The state's record with the checksum of its arrays and fields as they are now."""
    meta = json.loads((out / f"{PARTIAL}.json").read_text())
    meta["digest"] = digest((out / f"{PARTIAL}.npz").read_bytes(), meta)
    (out / f"{PARTIAL}.json").write_text(json.dumps(meta))


def _at(index, value):
    def change(a):
        a[index] = value
        return a
    return change


def test_the_demo_state_is_what_these_tests_take_it_to_be(demo, tmp_path):
    _, out = _stopped(demo, tmp_path)
    with np.load(out / f"{PARTIAL}.npz") as arrays:
        assert arrays["L0/shape"].tolist()[:2] == [CHANNELS, TOP]
        assert arrays["L0/image"].shape == (CHANNELS, TOP) and arrays["done"].tolist() == [True] * 2 + [False] * 4
        assert set(arrays["L0/image"].ravel().tolist()) <= {0, 1}


DAMAGES = {
    # what the re-test found resumed silently into a wrong atlas
    "image -7": (dict(L0__image=_at((3, 1), -7)), "layer conv1's image indices"),
    "image past the data": (dict(L0__image=_at((0, 0), 6)), "layer conv1's image indices"),
    "image not done yet": (dict(L0__image=_at((0, 0), 4)), "an image not done yet"),
    "the same image twice": (dict(L0__image=lambda a: np.stack([a[:, 0], a[:, 0]], 1)), "twice"),
    "NaN score": (dict(L0__score=_at((2, 0), np.nan)), "layer conv1's scores"),
    "scores out of order": (dict(L0__score=lambda a: a[:, ::-1].copy()), "not best first"),
    "negative counts": (dict(L0__count=lambda a: a * 0 - 5.0), "layer conv1's counts"),
    "counts that differ by channel": (dict(L0__count=_at(1, 7.0)), "layer conv1's counts"),
    "NaN count": (dict(L0__count=_at(0, np.nan)), "layer conv1's counts"),
    "negative m2": (dict(L0__m2=_at(0, -1.0)), "layer conv1's sums of squares"),
    "positives past the count": (dict(L0__positive=lambda a: a * 0 + 10**9), "layer conv1's positive counts"),
    "a position of 2**40": (dict(L0__pos=_at((1, 0), 2**40)), "layer conv1's positions"),
    "a negative position": (dict(L0__pos=_at((1, 0), -1)), "layer conv1's positions"),
    # below the positions counted (2 images of 64 x 64), past one image's map: thumbnails failed after the run
    "a position past the map": (dict(L0__pos=_at((1, 0), 64 * 64)), "position 4096 is past its map"),
    "float image indices": (dict(L0__image=lambda a: a.astype(np.float64)), "L0/image is float64, not int64"),
    "object-free but wrong kind of done": (dict(done=lambda a: a.astype(np.uint8)), "done is uint8, not bool"),
    "a score matrix of another shape": (dict(L0__score=lambda a: a[:, :1].copy()), "L0/score has shape (16, 1)"),
    "a K that is not the job's": (dict(L0__shape=_at(1, 3)), "keeps the top 3, the job 2"),
    "a width of 0": (dict(L0__shape=_at(2, 0)), "map width"),
    "no done": (dict(done=None), "lacks done"),
    "no mean": (dict(L0__mean=None), "lacks L0/mean"),
    # issue 52: every image marked done resumed into 480 wrong top entries of 720; a NaN mean into bare NaN
    "every image marked done": (dict(done=lambda a: a | True), "4 of the images done were neither read nor skipped"),
    "a NaN mean": (dict(L0__mean=_at(3, np.nan)), "layer conv1's means and sums of squares disagree"),
    "more positions seen": (dict(seen=_at(1, 10**6)), "the layers count 8192 positions, the images read gave 1004096"),
    "positions of an image not done": (dict(seen=_at(4, 4096)), "positions are recorded for an image not read"),
    "no positions seen": (dict(seen=None), "lacks seen"),
    "an entry dropped": (dict(L0__image=_at((5, 1), -1), L0__score=_at((5, 1), -np.inf), L0__pos=_at((5, 1), 0)),
                         "layer conv1 keeps [2, 2, 2, 2, 2, 1, 2, 2, 2, 2, 2, 2, ... entries per channel; 2 images "
                         "read fill 2 of the top 2"),
    "a layer without its shape": (dict(L0__shape=None), "lacks L0/shape"),
    "an array no state has": (dict(extra=lambda _: np.zeros(3)), "holds extra, which no saved state has"),
}


@pytest.mark.parametrize("name", list(DAMAGES))
def test_a_damaged_resume_state_is_refused_with_the_restart_hint(demo, tmp_path, finished, name):
    changes, says = DAMAGES[name]
    data, out = _stopped(demo, tmp_path)
    _rewrite(out, **changes)
    with pytest.raises(AtlasError, match=re.escape(says)) as error:
        run_atlas(demo, data, "conv1", TOP, out, batch=2, thumbnails=False)
    message = str(error.value)
    assert "--restart" in message and "damaged" in message and "\n" not in message
    assert not (out / "atlas.json").exists()
    again = run_atlas(demo, data, "conv1", TOP, out, batch=2, thumbnails=False, restart=True)
    assert again["layers"] == finished["layers"]


def _edit_record(out: Path, edit) -> None:
    meta = json.loads((out / f"{PARTIAL}.json").read_text())
    edit(meta)
    (out / f"{PARTIAL}.json").write_text(json.dumps(meta))
    _sign(out)


@pytest.mark.parametrize("edit, says", [
    (lambda m: m.update(key="0123456789abcdef"),
     "atlas.partial.json is the state of another job ('0123456789abcdef', not"),
    (lambda m: m.update(done=6), "atlas.partial.json counts 6 images done, atlas.partial.npz 2"),
    (lambda m: m.update(done=True), "atlas.partial.json: done must be a whole number from 0 to 6, not True"),
    (lambda m: m.update(skipped=[{"path": "elsewhere.png", "reason": "x"}]), "names 'elsewhere.png', which is not in"),
    (lambda m: m.update(skipped=[{"path": "1.png", "reason": "x"}]), "positions are recorded for an image not read"),
    (lambda m: m.update(skipped=[{"path": "4.png", "reason": "x"}]), "names 4.png before it was done"),
    (lambda m: m.update(skipped=[{"path": "0.png", "reason": "x", "more": 1}]), "is not a list of files and reasons"),
    (lambda m: m.pop("skipped"), "atlas.partial.json lacks skipped"),
    (lambda m: m.update(extra=1), "atlas.partial.json holds extra, which no saved state has"),
])
def test_a_damaged_state_record_is_refused_with_the_restart_hint(demo, tmp_path, edit, says):
    data, out = _stopped(demo, tmp_path)
    _edit_record(out, edit)
    with pytest.raises(AtlasError, match=re.escape(says)) as error:
        run_atlas(demo, data, "conv1", TOP, out, batch=2, thumbnails=False)
    assert "--restart" in str(error.value) and "\n" not in str(error.value)


def test_a_value_no_rule_can_check_is_held_by_the_checksum(demo, tmp_path, finished):
    """A score raised at the top of its channel keeps every rule (best first, not NaN): the checksum of the state
    is what refuses it, as the tester changes a file (the checksum left as the job wrote it)."""
    data, out = _stopped(demo, tmp_path)
    path = out / f"{PARTIAL}.npz"
    with np.load(path) as arrays:
        kept = {k: arrays[k] for k in arrays.files}
    kept["L0/score"][0, 0] += 100.0
    raised = float(kept["L0/score"][0, 0])
    np.savez(path, **kept)
    with pytest.raises(AtlasError, match=re.escape("its checksum does not match: atlas.partial.npz or "
                                                   "atlas.partial.json changed after the job saved them")):
        run_atlas(demo, data, "conv1", TOP, out, batch=2, thumbnails=False)
    _sign(out)  # what a state that keeps the rules but not the truth would give: the top score is the raised one
    best = run_atlas(demo, data, "conv1", TOP, out, batch=2, thumbnails=False)["layers"]["conv1"]["top"][0][0]
    assert best["score"] == raised and best["score"] > finished["layers"]["conv1"]["top"][0][0]["score"] + 90


def _npy_header(shape, dtype="|b1") -> bytes:
    """An .npy (format 1.0) whose header declares `shape` and holds 16 bytes of data, written by hand."""
    header = repr({"descr": dtype, "fortran_order": False, "shape": shape}).encode()
    header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + bytes(16)


def test_an_npy_header_declaring_ten_trillion_elements_is_refused_before_it_is_read(demo, tmp_path):
    data, out = _stopped(demo, tmp_path)
    path = out / f"{PARTIAL}.npz"
    with zipfile.ZipFile(path) as old:
        members = {name: old.read(name) for name in old.namelist()}
    members["done.npy"] = _npy_header((10**13,))
    with zipfile.ZipFile(path, "w") as new:
        for name, blob in members.items():
            new.writestr(name, blob)
    started = time.monotonic()
    declared = re.escape("done.npy's header declares 10000000000000 bytes, it holds 16")  # 10**13 bools, 1 byte each
    with pytest.raises(AtlasError, match=declared) as error:
        run_atlas(demo, data, "conv1", TOP, out, batch=2, thumbnails=False)
    assert "--restart" in str(error.value) and time.monotonic() - started < 20
    # a layer's array too: (16, 10**12) float32 would be 64 TB
    members["done.npy"] = io.BytesIO()
    np.save(members["done.npy"], np.array([True, True, False, False, False, False]))
    members["done.npy"] = members["done.npy"].getvalue()
    members["L0/score.npy"] = _npy_header((16, 10**12), "<f4")
    with zipfile.ZipFile(path, "w") as new:
        for name, blob in members.items():
            new.writestr(name, blob)
    with pytest.raises(AtlasError, match=re.escape("L0/score.npy's header declares 64000000000000 bytes, it holds 16")):
        run_atlas(demo, data, "conv1", TOP, out, batch=2, thumbnails=False)


@pytest.mark.parametrize("name", [f"{PARTIAL}.npz", f"{PARTIAL}.json"])
def test_a_folder_in_place_of_the_saved_state_is_refused_and_kept(demo, tmp_path, name):
    """Refused in one line, with or without --restart: a folder is the user's, never removed."""
    data, out = _stopped(demo, tmp_path)
    (out / name).unlink()
    (out / name).mkdir()
    (out / name / "kept.txt").write_text("mine")
    for restart in (False, True):
        with pytest.raises(AtlasError, match=re.escape(f"{out / name} is a folder, not a file of the atlas; "
                                                       f"move or delete that folder.")):
            run_atlas(demo, data, "conv1", TOP, out, batch=2, thumbnails=False, restart=restart)
        assert (out / name / "kept.txt").read_text() == "mine"


def test_a_folder_in_place_of_the_lock_is_refused_in_one_line(demo, tmp_path):
    data, out = images(tmp_path / "data"), tmp_path / "atlas"
    (out / LOCK_FILE).mkdir(parents=True)
    with pytest.raises(AtlasError, match=re.escape(f"{out / LOCK_FILE} is a folder, not a lock; move or delete it.")):
        run_atlas(demo, data, "conv1", TOP, out, batch=2, thumbnails=False)
    assert (out / LOCK_FILE).is_dir()


def test_a_state_of_fewer_channels_than_the_layer_is_refused(demo, tmp_path):
    """Consistent in itself (15 channels everywhere), but the model's conv1 has 16."""
    data, out = _stopped(demo, tmp_path)
    cut = {f"L0__{f}": (lambda a: a[:15].copy()) for f in ("score", "image", "pos", "count", "mean", "m2",
                                                            "positive")}
    with np.load(out / f"{PARTIAL}.npz") as arrays:
        width = int(arrays["L0/shape"][2])  # the map's width as the job saved it
    _rewrite(out, L0__shape=_at(0, 15), **cut)
    with pytest.raises(AtlasError, match=re.escape(f"layer conv1's state has 15 channels and a map {width} wide; "
                                                   f"the layer has 16 channels and a map {width} wide); ")):
        run_atlas(demo, data, "conv1", TOP, out, batch=2, thumbnails=False)


# -- atlas.json read back -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def built(demo, tmp_path_factory):
    root = tmp_path_factory.mktemp("built")
    run_atlas(demo, images(root / "data", 4), "conv1", TOP, root / "atlas", batch=2)
    return root / "atlas"


def _damaged_copy(built: Path, tmp_path: Path, edit) -> Path:
    atlas = json.loads((built / "atlas.json").read_text())
    edit(atlas)
    out = tmp_path / "copy"
    out.mkdir()
    (out / "atlas.json").write_text(json.dumps(atlas))
    return out


@pytest.mark.parametrize("edit, says", [
    (lambda a: a["layers"]["conv1"]["top"][0][0].update(image="a\0b.png"), "conv1 channel 0 entry 0: the image"),
    (lambda a: a["layers"]["conv1"]["top"][0][1].update(y=float("nan")), "conv1 channel 0 entry 1: y"),
    (lambda a: a["layers"]["conv1"]["top"][2][0].update(x=-1), "conv1 channel 2 entry 0: x"),
    (lambda a: a["layers"]["conv1"]["top"][2][0].update(x=1.5), "conv1 channel 2 entry 0: x"),
    (lambda a: a["layers"]["conv1"]["top"][2][0].update(score="7"), "conv1 channel 2 entry 0: the score"),
    (lambda a: a["layers"]["conv1"]["top"][1].append(3), "conv1 channel 1 entry 2"),
    (lambda a: a["layers"].update({"a\0b": a["layers"]["conv1"]}), "a layer's name"),
    (lambda a: a["layers"]["conv1"].update(channels=True), "conv1: channels"),
    (lambda a: a["layers"]["conv1"].update(mean=[0.0] * 3), "conv1: mean holds 3 numbers for 16 channels"),
    (lambda a: a["layers"]["conv1"]["mean"].__setitem__(0, "x"), "conv1: mean holds 3 numbers"
     if False else "conv1: mean holds something other than numbers"),
])
def test_an_atlas_json_with_nul_or_a_position_that_is_no_whole_number_is_refused(built, tmp_path, edit, says):
    out = _damaged_copy(built, tmp_path, edit)
    with pytest.raises(AtlasError, match=re.escape(says)) as error:
        read_atlas(out)
    assert "\n" not in str(error.value) and "\0" not in str(error.value)


def test_an_atlas_json_with_a_raw_nul_byte_is_refused_in_one_line(built, tmp_path):
    out = tmp_path / "copy"
    out.mkdir()
    text = (built / "atlas.json").read_text()
    (out / "atlas.json").write_text(text.replace('"image":"', '"image":"\0', 1))
    with pytest.raises(AtlasError, match="Cannot read") as error:
        read_atlas(out)
    assert "\n" not in str(error.value)


def test_the_atlas_as_built_reads_back(built):
    atlas = read_atlas(built)
    assert list(atlas["layers"]) == ["conv1"] and len(atlas["layers"]["conv1"]["top"]) == CHANNELS


@pytest.mark.parametrize("layer", ["../../x", "..", ".", "a/../../b", "/etc", "", "a\0b", "a//b", "x/.."])
def test_thumbnail_path_never_leaves_the_atlas_folder(built, layer):
    with pytest.raises(SpecError, match="layer"):
        thumbnail_path(built, layer, 0, 0)


def test_thumbnail_path_of_a_real_layer_and_bad_numbers(built):
    assert thumbnail_path(built, "conv1", 5, 1) == built / "thumbnails" / "conv1" / "5_1.png"
    assert thumbnail_path(built, "conv1", 5, 1).is_file()
    assert thumbnail_path(built, "block.conv2", 0, 0) == built / "thumbnails" / "block.conv2" / "0_0.png"
    for channel, rank in ((-1, 0), (0, -1)):
        with pytest.raises(SpecError, match="at least 0"):
            thumbnail_path(built, "conv1", channel, rank)


@pytest.mark.parametrize("changes, says", [
    (dict(L0__pos=_at((1, 0), 64 * 64)), "position 4096 is past its map (its image gave 4096 positions)"),
    ({"L0__shape": _at(0, 15), **{f"L0__{f}": (lambda a: a[:15].copy())
                                  for f in ("score", "image", "pos", "count", "mean", "m2", "positive")}},
     "layer conv1's state has 15 channels and a map 64 wide; the layer has 16 channels and a map 64 wide"),
])
def test_a_damaged_state_with_every_image_done_is_checked_against_the_model_too(demo, tmp_path, changes, says):
    """Cancelled after the last batch: the resumed job runs no batch that would meet the layer's shapes."""
    data, out = images(tmp_path / "data"), tmp_path / "atlas"
    count = {}
    with pytest.raises(RunCancelled, match="after 6 of 6 images"):
        run_atlas(demo, data, "conv1", TOP, out, batch=2, thumbnails=False, progress=lambda d, t: count.update(d=d),
                  cancel=lambda: count["d"] == 6)
    _rewrite(out, **changes)
    with pytest.raises(AtlasError, match=re.escape(says)) as error:
        run_atlas(demo, data, "conv1", TOP, out, batch=2)
    assert "--restart" in str(error.value) and not (out / "atlas.json").exists()
