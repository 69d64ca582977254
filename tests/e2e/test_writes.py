"""Every write is whole or not at all, and every command checks where it writes before any model work.

Faults are real: a file-size limit (`RLIMIT_FSIZE`) fails a write with EFBIG exactly as a full disk
fails it with ENOSPC (Python ignores SIGXFSZ, so the write returns the error). Commands run in a
child process that has the limit; the test process never has it.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from inspector import cli
from inspector.cli import common as cli_common
from inspector.core.common.errors import WriteError
from inspector.core.storage.writes import save_npz, write_bytes, write_json

LIMIT = 64 * 1024  # bytes: every file the commands below write is larger


def _limited(limit: int = LIMIT):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    return apply


def run_limited(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    """`network-inspector ARGV` in a child process whose files may not grow past LIMIT bytes."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run([sys.executable, "-m", "inspector", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300, preexec_fn=_limited())


def leftovers(folder: Path) -> list[str]:
    """Temporary files the writer would have left (its names start with a dot and end in .tmp)."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.name.endswith(".tmp"))


def one_error_line(done: subprocess.CompletedProcess) -> str:
    lines = [l for l in done.stderr.splitlines() if l.strip() and not l.startswith(("capture:", "atlas:"))]
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "Traceback" not in done.stderr
    return lines[0]


def test_the_writer_leaves_the_old_file_and_no_temporary_file_when_a_write_fails(tmp_path):
    """In a child process with the limit: the old file keeps its bytes, nothing else is left."""
    target = tmp_path / "kept.bin"
    target.write_bytes(b"old content")
    code = textwrap.dedent(f"""
        import numpy as np
        from inspector.core.common.errors import WriteError
        from inspector.core.storage.writes import save_npz, write_bytes
        for write in (lambda: write_bytes({str(target)!r}, bytes(200_000)),
                      lambda: save_npz({str(target)!r}, {{"a": np.zeros(100_000)}})):
            try:
                write()
            except WriteError as exc:
                print(exc.errno, exc)
            else:
                print("written")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          preexec_fn=_limited())
    lines = done.stdout.splitlines()
    assert lines == [f"{errno.EFBIG} Could not write {target}: the file is larger than this system allows."] * 2, \
        done.stdout + done.stderr
    assert target.read_bytes() == b"old content"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.bin"]


def test_the_writer_writes_whole_files_with_the_usual_permissions(tmp_path):
    arrays = {"a": np.arange(6.0).reshape(2, 3), "b/c": np.array([1, 2], np.int8)}
    path = save_npz(tmp_path / "deep" / "x.npz", arrays)  # missing folders are made
    with np.load(path) as back:
        assert set(back.files) == {"a", "b/c"} and np.array_equal(back["a"], arrays["a"])
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's 0600
    write_json(tmp_path / "v.json", {"k": [1, 2]}, indent=1)
    assert json.loads((tmp_path / "v.json").read_text()) == {"k": [1, 2]}
    os.chmod(path, 0o640)
    write_bytes(path, b"new")
    assert path.read_bytes() == b"new" and path.stat().st_mode & 0o777 == 0o640  # an old file's mode is kept
    with pytest.raises(WriteError, match="is a file, not a folder|Could not write"):
        write_bytes(tmp_path / "v.json" / "under_a_file", b"x")
    assert leftovers(tmp_path) == []


def test_capture_on_a_full_disk_says_so_in_one_line_and_keeps_the_old_file(tmp_path):
    out = tmp_path / "caps.npz"
    out.write_bytes(b"an earlier capture")
    done = run_limited("capture", "--model", "demo", "--input", "sample:star", "--layers", "all",
                       "--out", str(out), cwd=tmp_path)
    assert one_error_line(done) == f"error: Could not write {out}: the file is larger than this system allows."
    assert out.read_bytes() == b"an earlier capture" and leftovers(tmp_path) == []


def test_export_with_manifest_on_a_full_disk_leaves_neither_file(tmp_path):
    out = tmp_path / "caps.npz"
    done = run_limited("capture", "--model", "demo", "--input", "sample:star", "--layers", "all",
                       "--out", str(out), "--manifest", cwd=tmp_path)
    assert "Could not write" in one_error_line(done)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_folder_capture_on_a_full_disk_stops_in_one_line_with_whole_files_only(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    for i in range(3):
        Image.fromarray(np.full((40, 40, 3), 60 * i, np.uint8)).save(data / f"{i}.png")
    out = tmp_path / "out"
    done = run_limited("capture", "--model", "demo", "--input", str(data), "--layers", "all",
                       "--out", str(out), cwd=tmp_path)
    assert f"Could not write {out / '0.png.npz'}" in one_error_line(done)
    assert leftovers(tmp_path) == [] and not (out / "0.png.npz").exists()


def test_an_atlas_on_a_full_disk_stops_in_one_line(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    rng = np.random.default_rng(0)
    for i in range(4):
        Image.fromarray(rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)).save(data / f"{i}.png")
    out = tmp_path / "atlas"
    done = run_limited("atlas", "--model", "demo", "--data", str(data), "--layers", "all",
                       "--top", "3", "--out", str(out), cwd=tmp_path)
    assert "Could not write" in one_error_line(done) and str(out) in done.stderr
    assert not (out / "atlas.json").exists() and leftovers(tmp_path) == []


# -- outputs checked before any model work -------------------------------------------------------------
def _fail(*_args, **_kwargs):
    raise AssertionError("the model was loaded although the command was going to fail")


@pytest.fixture
def no_model(monkeypatch):
    monkeypatch.setattr(cli_common, "load", _fail)
    import inspector.core.compare.pair as pair

    monkeypatch.setattr(pair, "load_pair", _fail)


def one_error(capsys, *argv: str) -> str:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def test_diff_checks_its_out_before_either_model_loads(capsys, tmp_path, no_model):
    (tmp_path / "a_file").write_text("x")
    base = ["diff", "--model", "demo", "--against-model", "demo", "--input", "sample:star", "--out"]
    assert f"{tmp_path / 'a_file'} is a file, not a folder" in one_error(capsys, *base, str(tmp_path / "a_file" / "d"))
    assert "is a folder; name a file inside it" in one_error(capsys, *base, str(tmp_path))


def test_diff_out_names_the_file_it_wrote(capsys, tmp_path):
    out = tmp_path / "pair"
    assert cli.main(["diff", "--model", "demo", "--against-model", "demo", "--against-weights",
                     "random", "--input", "sample:star", "--layers", "conv1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.rstrip().endswith(f"-> {out}.npz") and (tmp_path / "pair.npz").is_file()


def test_atlas_checks_its_out_before_the_model_loads(capsys, tmp_path, no_model):
    (tmp_path / "a_file").write_text("x")
    base = ["atlas", "--model", "demo", "--data", str(tmp_path), "--layers", "all", "--out"]
    assert "is a file" in one_error(capsys, *base, str(tmp_path / "a_file"))
    assert "is a file, not a folder" in one_error(capsys, *base, str(tmp_path / "a_file" / "atlas"))
    assert "cannot write in /proc" in one_error(capsys, *base, "/proc/atlas")


def test_attribute_refuses_to_overwrite_its_input(capsys, tmp_path, no_model):
    picture = tmp_path / "cat.png"
    Image.fromarray(np.zeros((8, 8, 3), np.uint8)).save(picture)
    before = picture.read_bytes()
    message = one_error(capsys, "attribute", "--model", "demo", "--method", "saliency", "--input", str(picture),
                        "--out", str(tmp_path / "." / "cat.png"))
    assert "is the --input file" in message and picture.read_bytes() == before


def test_a_folder_capture_takes_a_new_empty_or_own_folder_and_refuses_others_before_loading(
        capsys, tmp_path, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    Image.fromarray(np.zeros((40, 40, 3), np.uint8)).save(data / "a.png")
    base = ["capture", "--model", "demo", "--input", str(data), "--layers", "conv1", "--out"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli.main([*base, str(empty)]) == 0  # an existing empty folder is fine
    assert cli.main([*base, str(empty)]) == 0  # so is one an earlier folder capture wrote
    assert sorted(p.name for p in empty.iterdir()) == ["a.png.npz", "manifest.json"]
    capsys.readouterr()
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    monkeypatch.setattr(cli_common, "load", _fail)
    assert "already holds other files" in one_error(capsys, *base, str(other))
    assert "is a file; it must be a folder" in one_error(capsys, *base, str(other / "notes.txt"))
