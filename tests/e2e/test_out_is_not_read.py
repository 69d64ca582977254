"""Issue 40, item 12: no output of a command is a file the command reads. `attribute --out` equal to the --baseline
file overwrote the baseline (only --input was guarded); the --weights file, a model file and capture's --session
(its --out and its --manifest) are guarded too, each in one line naming both, before any model work, the file
untouched. The same file by another name (./b.npy, a hard link) counts."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from cli_here import run_here

ATTRIBUTE = ("attribute", "--model", "demo", "--method", "saliency", "--input", "sample:star")


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    np.save("b.npy", np.zeros((1, 3, 64, 64), np.float32))
    os.link("b.npy", "hard.npy")
    from inspector.core import load_model

    torch.save(load_model("demo").module.state_dict(), "w.npy")  # weights may have any ending
    os.link("w.npy", "w.npz")
    from inspector.core.session.file import Session, save_session

    save_session(Session(model="demo", input="sample:star", layers=("conv1",)), "s.json")
    return {name: (tmp_path / name).read_bytes() for name in ("b.npy", "w.npy", "s.json")}


@pytest.mark.parametrize("argv, said", [
    ((*ATTRIBUTE, "--method", "occlusion", "--baseline", "b.npy", "--out", "./b.npy"),  # a method that reads it
     "--out ./b.npy is the --baseline file b.npy; write the result under another name."),
    ((*ATTRIBUTE, "--method", "ig", "--baseline", "b.npy", "--out", "hard.npy"),
     "--out hard.npy is the --baseline file b.npy; write the result under another name."),
    ((*ATTRIBUTE, "--weights", "w.npy", "--out", "w.npy"),
     "--out w.npy is the --weights file w.npy; write the result under another name."),
    (("attribute", "--model", "demo", "--method", "saliency", "--input", "b.npy", "--out", "b.npy"),
     "--out b.npy is the --input file b.npy; write the result under another name."),
    (("capture", "--session", "s.json", "--out", "s", "--manifest"),
     "--manifest s.json is the --session file s.json; write the result under another name."),
    (("diff", "--model", "demo", "--against", "w.npz", "--input", "sample:star", "--out", "w"),
     "--out w.npz is the --against file w.npz; write the result under another name."),
    (("capture", "--model", "demo", "--input", "b.npy", "--out", "b.npy.npz", "--weights", "b.npy.npz"),
     None),  # not there yet: nothing read is written
])
def test_no_output_is_a_file_the_command_reads(files, tmp_path, argv, said):
    done = run_here(*argv)
    if said is None:
        assert done.returncode == 2 and "b.npy.npz" in done.stderr  # the weights are missing, nothing else
        return
    assert (done.returncode, done.stderr) == (2, f"error: {said}\n")
    assert {name: (tmp_path / name).read_bytes() for name in files} == files


def test_the_program_keeps_the_baseline_it_reads(files, tmp_path):
    """The issue's case, through the real command: --out the --baseline file."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([sys.executable, "-m", "inspector", *ATTRIBUTE, "--method", "ig",
                           "--baseline", "b.npy", "--out", "b.npy"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert (done.returncode, done.stderr) == (
        2, "error: --out b.npy is the --baseline file b.npy; write the result under another name.\n")
    assert (tmp_path / "b.npy").read_bytes() == files["b.npy"]
