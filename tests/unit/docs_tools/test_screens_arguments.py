"""`python -m inspector.docs.screens`'s arguments: a bad --size, an unknown --only name or a file as the folder is
one line and exit 2, before Qt or torch is imported; the pictures it can take are the ones the pages name."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.docs.screens import parse_args
from inspector.docs.screens_shots import SHOTS

ROOT = Path(__file__).parents[3]
NAMES = ["getting-started", "layer", "compare", "attribution", "attribution-compare-all", "detector", "attention",
         "two-checkpoints", "folder", "atlas", "graph", "graph-open", "concepts", "concept-page", "concept-ablated"]
PROG = "python -m inspector.docs.screens"


@pytest.mark.parametrize(("args", "said"), [
    (["out", "--size", "12x"], "--size 12x: give WIDTHxHEIGHT from 800x600 to 3840x2400, e.g. 1280x800"),
    (["out", "--size", "640x480"], "--size 640x480: give WIDTHxHEIGHT from 800x600 to 3840x2400, e.g. 1280x800"),
    (["out", "--size", "1280X800x2"], "--size 1280X800x2: give WIDTHxHEIGHT from 800x600 to 3840x2400, e.g. 1280x800"),
    (["out", "--only", "layer", "nope", "graph-closed"],
     "--only nope graph-closed: not a screenshot; they are " + ", ".join(NAMES)),
])
def test_bad_arguments_are_one_line_and_exit_2(args, said, capsys):
    with pytest.raises(SystemExit) as stopped:
        parse_args(args)
    assert stopped.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"{PROG}: error: {said}"


def test_a_file_as_the_folder_is_refused(tmp_path, capsys):
    (tmp_path / "f.png").write_bytes(b"")
    with pytest.raises(SystemExit) as stopped:
        parse_args([str(tmp_path / "f.png")])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"{PROG}: error: {tmp_path / 'f.png'} is a file, not a folder"


def test_good_arguments():
    args = parse_args(["docs/images"])
    assert (args.out, args.size, args.only) == ("docs/images", (1280, 800), NAMES)
    args = parse_args(["o", "--size", "1500x950", "--only", "graph", "layer", "graph"])
    assert (args.size, args.only) == ((1500, 950), ["graph", "layer"])


def test_refused_before_qt_or_torch_is_imported(tmp_path):
    code = ("import sys\nfrom inspector.docs.screens import main\ntry:\n    main(['o', '--only', 'nope'])\n"
            "except SystemExit as e:\n    print(e.code, sorted(m for m in ('PySide6', 'torch') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.stdout.strip() == "2 []"
    assert not (tmp_path / "o").exists()


def test_the_pictures_are_those_the_pages_name():
    assert list(SHOTS) == NAMES
    named = set()
    for page in (ROOT / "docs").rglob("*.md"):
        named |= set(re.findall(r"images/([\w-]+)\.png", page.read_text(encoding="utf-8")))
    assert named <= set(NAMES), sorted(named - set(NAMES))
