"""Issue 40, item 7, through the command: a name over 255 bytes in --input, --out, --data, --weights or a
session's input, a FIFO and a folder named x.mp4 as --input are one line that names the path as typed and what
it is (a traceback with OSError [Errno 36], or "file not found" with the absolute path, before). The long input
and the FIFO run the real program (a FIFO opened would block it); the others run `main` here (cli_here)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from cli_here import run_here

LONG = "n" * 300  # one name of 300 bytes (304 with .png)
TOO_LONG = "(a name in it is 304 bytes long, and names here take at most 255)"


def shown(name: str) -> str:
    return name[:40] + "..." + name[-30:]


def one_error_line(cwd, *argv: str, here: bool = False) -> str:
    if here:
        done = run_here(*argv)
    else:
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "QT_QPA_PLATFORM": "offscreen"}
        done = subprocess.run([sys.executable, "-m", "inspector", *argv], cwd=cwd, env=env, capture_output=True,
                              text=True, timeout=120)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


ATTRIBUTE = ("attribute", "--model", "demo", "--method", "saliency")


@pytest.mark.parametrize("argv, said", [
    ((*ATTRIBUTE, "--input", LONG + ".png", "--out", "o.npy"),
     f"error: Input file name too long: {shown(LONG + '.png')} {TOO_LONG}"),
    ((*ATTRIBUTE, "--input", "fifo.png", "--out", "o.npy"), "error: Input file is not a regular file: fifo.png (a FIFO)"),
])
def test_the_program_names_a_long_input_and_a_fifo_as_typed(tmp_path, argv, said):
    os.mkfifo(tmp_path / "fifo.png")
    assert one_error_line(tmp_path, *argv) == said
    assert sorted(os.listdir(tmp_path)) == ["fifo.png"]  # nothing written


@pytest.mark.parametrize("argv, said", [
    ((*ATTRIBUTE, "--input", "x.mp4", "--out", "o.npy"),
     "error: Input file is a folder, not a file: x.mp4; name a file inside it"),
    ((*ATTRIBUTE, "--input", "sample:star", "--out", LONG + ".npy"),
     f"error: --out name too long: {shown(LONG + '.npy')} {TOO_LONG}"),
    (("atlas", "--model", "demo", "--data", LONG + ".png", "--layers", "conv1", "--out", "atlas"),
     f"error: The data name too long: {shown(LONG + '.png')} {TOO_LONG}"),
    (("capture", "--model", "demo", "--weights", LONG + ".png", "--input", "sample:star"),
     f"error: Weights file name too long: {shown(LONG + '.png')} {TOO_LONG}"),
    (("capture", "--session", "s.inspector.json"),
     f"error: s.inspector.json: its input name too long: {shown(LONG + '.png')} {TOO_LONG}"),
])
def test_a_path_the_command_cannot_use_is_named_as_typed_in_one_line(tmp_path, monkeypatch, argv, said):
    from inspector.core.session.file import Session, save_session

    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.mp4").mkdir()
    save_session(Session(input=LONG + ".png"), tmp_path / "s.inspector.json")
    assert one_error_line(tmp_path, *argv, here=True) == said
    assert sorted(os.listdir(tmp_path)) == ["s.inspector.json", "x.mp4"]  # nothing written
