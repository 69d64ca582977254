"""The atlas folder: owned by one job at a time (a lock two real processes contend for), nothing left
by a start that fails, the output folder never part of the data, damaged resume state refused."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from inspector.core import load_model
from inspector.core.atlas import run_atlas
from inspector.core.atlas.store import JOB_FILE, PARTIAL
from inspector.core.folder_jobs import LOCK_FILE
from inspector.core.common.errors import AtlasError, DeviceError, RunCancelled


def images(folder: Path, count: int = 6) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    for i in range(count):
        Image.fromarray(rng.integers(0, 256, (40, 40, 3), dtype=np.uint8)).save(folder / f"{i}.png")
    return folder


@pytest.fixture(scope="module")
def demo():
    return load_model("demo")


def test_a_second_process_is_refused_while_the_first_holds_the_folder(tmp_path):
    """Two real processes: the first holds the lock until told to let go (it slept 30 s, and on a loaded machine
    the second, importing torch and loading the model, came after that), the second is refused in one line."""
    out = tmp_path / "atlas"
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from inspector.core.folder_jobs import JobLock
        with JobLock(Path({str(out)!r})):
            print("held", flush=True)
            sys.stdin.read()  # until the test closes it
    """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        second = subprocess.run([sys.executable, "-m", "inspector", "atlas", "--model", "demo", "--data",
                                 str(images(tmp_path / "data")), "--layers", "conv1", "--out", str(out)],
                                capture_output=True, text=True, timeout=120)
        assert second.returncode == 2
        assert second.stderr.strip() == (f"error: {out} is being built by process {holder.pid} on "
                                         f"{os.uname().nodename}" + second.stderr.strip().split(os.uname().nodename, 1)[1])
        assert "wait for it to finish or stop it" in second.stderr and "Traceback" not in second.stderr
        assert not (out / JOB_FILE).exists()
    finally:
        holder.stdin.close()
        holder.kill()
        holder.wait()


def test_a_stale_lock_is_taken_over_and_the_lock_is_released(tmp_path, demo):
    out = tmp_path / "atlas"
    out.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (out / LOCK_FILE).write_text(json.dumps({"pid": int(dead.stdout), "host": os.uname().nodename,
                                             "since": "earlier"}))
    atlas = run_atlas(demo, images(tmp_path / "data"), "conv1", 2, out, batch=4)
    assert atlas["images"] == 6 and not (out / LOCK_FILE).exists()


def test_a_failed_start_writes_nothing(tmp_path, demo, monkeypatch):
    """No CUDA here: `device='cuda'` fails before the job file is written, so the next job with other
    layers is not refused as 'an unfinished atlas of a different job'."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    data, out = images(tmp_path / "data"), tmp_path / "atlas"
    with pytest.raises(DeviceError):
        run_atlas(demo, data, "conv1", 2, out, device="cuda")
    assert not out.exists() or sorted(p.name for p in out.iterdir()) == []
    assert run_atlas(demo, data, "conv2", 2, out)["images"] == 6


def test_cancelled_before_any_state_leaves_nothing_and_after_it_resumes(tmp_path, demo):
    data, out = images(tmp_path / "data"), tmp_path / "atlas"
    with pytest.raises(RunCancelled):
        run_atlas(demo, data, "conv1", 2, out, batch=2, cancel=lambda: True)
    assert (out / JOB_FILE).is_file() and (out / f"{PARTIAL}.npz").is_file()  # one batch was done and saved
    assert run_atlas(demo, data, "conv1", 2, out, batch=2)["images"] == 6


def test_the_output_folder_inside_the_data_is_not_data(tmp_path, demo):
    data = images(tmp_path / "data")
    out = data / "atlas"
    first = run_atlas(demo, data, "conv1", 2, out)
    assert (out / "thumbnails").is_dir()
    again = run_atlas(demo, data, "conv1", 2, out, restart=True)  # its thumbnails are PNGs inside the data
    assert first["images"] == again["images"] == 6
    assert all(not e["image"].startswith("atlas/") for ch in again["layers"]["conv1"]["top"] for e in ch)


@pytest.mark.parametrize("damage, says", [
    (lambda out: (out / f"{PARTIAL}.npz").write_bytes((out / f"{PARTIAL}.npz").read_bytes()[:100]),
     "cannot be read"),
    (lambda out: _edit_meta(out, skipped="not a list"), "'skipped' is not a list"),
    (lambda out: _short_done(out), "done declares 3 values, the data has 6 images"),
    (lambda out: (out / JOB_FILE).write_text("[1, 2]"), "is damaged (not the record of a job)"),
])
def test_damaged_resume_state_is_refused_with_how_to_start_over(tmp_path, demo, damage, says):
    data, out = images(tmp_path / "data"), tmp_path / "atlas"
    with pytest.raises(RunCancelled):
        run_atlas(demo, data, "conv1", 2, out, batch=2, cancel=lambda: True)
    damage(out)
    with pytest.raises(AtlasError, match=re.escape(says)) as error:
        run_atlas(demo, data, "conv1", 2, out, batch=2)
    assert "--restart" in str(error.value)
    assert run_atlas(demo, data, "conv1", 2, out, batch=2, restart=True)["images"] == 6


def _edit_meta(out: Path, **fields) -> None:
    meta = json.loads((out / f"{PARTIAL}.json").read_text())
    (out / f"{PARTIAL}.json").write_text(json.dumps({**meta, **fields}))


def _short_done(out: Path) -> None:
    with np.load(out / f"{PARTIAL}.npz") as arrays:
        kept = {k: arrays[k] for k in arrays.files}
    kept["done"] = kept["done"][:3]
    np.savez(out / f"{PARTIAL}.npz", **kept)


# -- listing: one rule for folders and globs ------------------------------------------------------------
def test_linked_folders_are_followed_once_and_loops_never(tmp_path):
    from inspector.core.inputs.files import list_images

    data = images(tmp_path / "data", 2)
    (data / "sub").mkdir()
    Image.fromarray(np.zeros((8, 8, 3), np.uint8)).save(data / "sub" / "s.png")
    (data / "sub" / "loop").symlink_to(data, target_is_directory=True)  # a loop back to the top
    elsewhere = images(tmp_path / "elsewhere", 1)
    (data / "linked").symlink_to(elsewhere, target_is_directory=True)  # a folder linked in: followed once
    (data / "twice").symlink_to(elsewhere, target_is_directory=True)  # the same folder again: not twice
    (data / "broken.png").symlink_to(tmp_path / "nowhere.png")
    (data / "self.png").symlink_to(data / "self.png")  # a link to itself
    expected = ["0.png", "1.png", "broken.png", "linked/0.png", "self.png", "sub/s.png"]
    for form in (data, f"{data}/**/*.png"):
        listed = list_images(form)
        assert [listed.relative(p) for p in listed.files] == expected, form
    started = time.monotonic()
    assert len(list_images(f"{data}/**/*.png")) == 6 and time.monotonic() - started < 5


def test_broken_links_are_reported_as_skipped_files(tmp_path, demo):
    data = images(tmp_path / "data", 3)
    (data / "broken.png").symlink_to(tmp_path / "nowhere.png")
    atlas = run_atlas(demo, data, "conv1", 2, tmp_path / "atlas")
    assert atlas["images"] == 3 and [s["path"] for s in atlas["skipped"]] == ["broken.png"]


def test_paths_read_back_from_an_atlas_never_leave_their_folders(tmp_path, demo):
    """Entries that are absolute, climb out with ../, or lead out through a link, and a layer named
    with ../, are not opened: no picture from outside the image folder or the atlas folder."""
    from inspector.core.atlas.pictures import open_atlas, top_pictures
    from inspector.core.common.errors import SpecError

    data, out = images(tmp_path / "data", 4), tmp_path / "atlas"
    run_atlas(demo, data, "conv1", 2, out)
    secret = tmp_path / "secret.png"
    Image.fromarray(np.full((40, 40, 3), 255, np.uint8)).save(secret)
    (data / "escape").symlink_to(tmp_path, target_is_directory=True)
    atlas = json.loads((out / "atlas.json").read_text())
    top = atlas["layers"]["conv1"]["top"][0]
    top[0]["image"], top[1]["image"] = str(secret), "../secret.png"
    atlas["layers"]["conv1"]["top"][1][0]["image"] = "escape/secret.png"
    atlas["layers"]["../../x"] = atlas["layers"]["conv1"]  # a layer name that climbs out
    (tmp_path / "x").mkdir()
    (out / "atlas.json").write_text(json.dumps(atlas))
    opened = open_atlas(out)
    for relative in (str(secret), "../secret.png", "escape/secret.png"):
        assert opened.image_path(relative) is None
    shown = top_pictures(opened, "conv1", 0)
    assert [p.rgb is None for p in shown[:2]] == [True, True]
    assert all("outside the image folder" in p.shown for p in shown[:2])
    assert top_pictures(opened, "conv1", 1)[0].rgb is None
    fake = tmp_path / "thumbnails" / "x"  # where thumbnail_path(out, "../../x", 0, 0) would point
    fake.mkdir(parents=True)
    Image.fromarray(np.zeros((8, 8, 3), np.uint8)).save(fake / "0_0.png")
    assert all(p.shown != "thumbnail" for p in top_pictures(opened, "../../x", 0))
    for channel in (-1, 16, 10**20, True):
        with pytest.raises(SpecError, match="channel must be a whole number from 0 to 15"):
            top_pictures(opened, "conv1", channel)
    with pytest.raises(TypeError, match=r"top_pictures\(\): channel must be int, not 1.0"):
        top_pictures(opened, "conv1", 1.0)
