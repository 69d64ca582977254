"""Issue 40, item 8 (the full disk): an .npy that does not fit says so as every other file does ("the file is larger
than this system allows" under a file-size limit, "the disk is full" for ENOSPC), not numpy's "50176 requested and
50144 written". Real faults: RLIMIT_FSIZE in a child process fails the write with EFBIG as a full disk fails it with
ENOSPC; the test process never has the limit."""

from __future__ import annotations

import errno
import os
import resource
import subprocess
import sys
import textwrap

LIMIT = 64 * 1024  # bytes: every file written below is larger


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))


def test_every_kind_of_file_says_the_same_when_it_does_not_fit(tmp_path):
    code = textwrap.dedent("""
        import sys
        import numpy as np
        from PIL import Image
        from inspector.core.common.errors import WriteError
        from inspector.core.storage.writes import save_image, save_npy, save_npz, write_bytes
        folder = sys.argv[1]
        rng = np.random.default_rng(0)
        for name, write in (("a.npy", lambda p: save_npy(p, np.zeros(100_000))),
                            ("b.npy", lambda p: save_npy(p, np.zeros((7, 3000), np.float32))),
                            ("c.npz", lambda p: save_npz(p, {"a": np.zeros(100_000)})),
                            ("d.png", lambda p: save_image(p, Image.fromarray(rng.integers(0, 256, (300, 300, 3),
                                                                                          dtype=np.uint8)))),
                            ("e.bin", lambda p: write_bytes(p, bytes(200_000)))):
            try:
                write(f"{folder}/{name}")
            except WriteError as exc:
                print(exc.errno, exc)
            else:
                print("written", name)
    """)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120,
                          env=env, preexec_fn=_limited)
    assert done.stdout.splitlines() == [
        f"{errno.EFBIG} Could not write {tmp_path / name}: the file is larger than this system allows."
        for name in ("a.npy", "b.npy", "c.npz", "d.png", "e.bin")], done.stdout + done.stderr
    assert os.listdir(tmp_path) == []  # no file, whole or half, and no temporary file


def test_the_attribute_command_says_the_npy_does_not_fit_in_one_line(tmp_path):
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "QT_QPA_PLATFORM": "offscreen"}
    out = tmp_path / "map.npy"
    done = subprocess.run([sys.executable, "-m", "inspector", "attribute", "--model", "demo", "--method", "saliency",
                           "--input", "sample:star", "--out", str(out)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120, preexec_fn=lambda: resource.setrlimit(
                              resource.RLIMIT_FSIZE, (8_192, resource.getrlimit(resource.RLIMIT_FSIZE)[1])))
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and lines == [
        f"error: Could not write {out}: the file is larger than this system allows."], done.stderr
    assert os.listdir(tmp_path) == []
