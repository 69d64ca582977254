"""`capture --input DIR` and `atlas` as commands: files written, one-line errors, Ctrl-C then resume, no Ray."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
from PIL import Image

from inspector.core import capture, load_input, load_model
from inspector.core.atlas import run_atlas

NO_RAY = ("import sys; from inspector.cli import main; rc = main(sys.argv[1:]); "
          "assert not [m for m in sys.modules if m == 'ray' or m.startswith('ray.')], 'ray was imported'; "
          "sys.exit(rc)")


def cli(*args, cwd):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run([sys.executable, "-c", NO_RAY, *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=300)


def images(folder, count, seed=0):
    rng = np.random.default_rng(seed)
    for i in range(count):
        sub = folder / f"class{i % 2}"
        sub.mkdir(parents=True, exist_ok=True)
        Image.fromarray(rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)).save(sub / f"{i:03d}.png")
    (folder / "class0" / "zz_corrupt.jpg").write_bytes(b"\xff\xd8\xff garbage")
    return folder


def test_capture_folder_writes_one_npz_per_image_and_a_manifest(tmp_path):
    data = images(tmp_path / "data", 3)
    done = cli("capture", "--model", "demo", "--input", str(data), "--layers", "conv1", "--sites", "output",
               "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "2 images captured" not in done.stdout and "3 images captured, 1 skipped" in done.stdout
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert [i["npz"] for i in manifest["images"]] == ["class0/000.png.npz", "class0/002.png.npz", "class1/001.png.npz"]
    assert manifest["skipped"][0]["path"] == "class0/zz_corrupt.jpg"
    demo = load_model("demo")
    for name in ("class0/002.png", "class1/001.png"):
        want = capture(demo, load_input(data / name, demo.preprocess, demo.input_shape), "conv1", "output")
        with np.load(tmp_path / "out" / f"{name}.npz") as got:
            np.testing.assert_allclose(got["conv1:output"], want["conv1:output"], rtol=1e-6, atol=1e-6)


def test_atlas_command_errors_and_ctrl_c_resume(tmp_path, capsys):
    from inspector.cli import main

    data = images(tmp_path / "data", 120)
    args = ["atlas", "--model", "demo", "--data", str(data), "--layers", "conv1,block.conv2", "--top", "3",
            "--batch", "2"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-c", NO_RAY, *args, "--out", str(tmp_path / "out")], cwd=tmp_path,
                            stderr=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    seen = bytearray()

    def read():
        while chunk := proc.stderr.read1(256):
            seen.extend(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + 120
    while b"/121 [" not in seen and time.monotonic() < deadline:  # the bar is up: batches are running
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(120) == 130
    reader.join(10)
    assert b"run it again with the same arguments to resume" in seen
    assert (tmp_path / "out" / "atlas.partial.npz").is_file() and not (tmp_path / "out" / "atlas.json").exists()
    assert main([*args, "--out", str(tmp_path / "out")]) == 0  # resumes
    resumed = capsys.readouterr()
    assert "atlas of 120 images (1 skipped)" in resumed.out and "skipped class0/zz_corrupt.jpg" in resumed.err
    whole = run_atlas(load_model("demo"), data, "conv1,block.conv2", 3, tmp_path / "whole", batch=2)
    assert json.loads((tmp_path / "out" / "atlas.json").read_text()) == whole

    assert main([*args[:6], "conv2", "--top", "3", "--out", str(tmp_path / "out")]) == 2
    other = capsys.readouterr().err
    assert other.count("\n") == 1 and other.startswith(f"error: {tmp_path / 'out'} holds the atlas of a different job")
    assert main(["atlas", "--model", "demo", "--data", str(tmp_path), "--layers", "nomatch*", "--out",
                 str(tmp_path / "o2")]) == 2
    assert "No layer matches 'nomatch*'" in capsys.readouterr().err
    assert not (tmp_path / "o2").exists()


def test_top_is_bounded_before_torch_loads(tmp_path):
    """Issue 52 item 6: --top had no upper bound (concepts' --top 1e9 passed 4.4 GB and died in numpy's
    _ArrayMemoryError); past 100 it is one line, before torch or the model loads, and nothing is written."""
    from cli_here import answers_in_one_interpreter, refused_early

    (answer,) = answers_in_one_interpreter([["atlas", "--model", "resnet18", "--data", "resources/samples",
                                             "--layers", "layer1", "--top", str(10**9), "--out", str(tmp_path / "a")]])
    refused_early(answer, f"error: --top {10**9} is more than 100, the most images kept per channel (each one is kept "
                          f"in memory for every channel and cropped into a thumbnail of its own).")
    assert not (tmp_path / "a").exists()
