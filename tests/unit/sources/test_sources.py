"""One definition of which model sources carry code (inspector.core.sources), used by the loader and sessions."""

from __future__ import annotations

import subprocess
import sys

import pytest

from inspector.core.session.file import Session
from inspector.core.sources.refs import is_factory, is_model_file
from inspector.core.sources.trust import carries_code

CASES = [
    # source, carries code
    ("demo", False),
    ("resnet18", False),
    ("vit_b_16", False),
    ("timm:resnet50", False),
    ("hf:microsoft/resnet-50", False),
    ("hf:./local/checkpoint", False),
    ("file.py:Name", True),
    ("models/my_model.py:make", True),
    ("Net.PY:Model", True),
    ("C:\\x\\m.py:Net", True),
    ("C:/Users/me/m.py:Net", True),
    ("package.module:Name", True),
    ("inspector.demo.toy:ToyMLP", True),
    ("mymodule:build", True),
    ("model.pt", True),
    ("model.pth", True),
    ("program.pt2", True),
    ("PROGRAM.PT2", True),
    ("scripted.ts", True),
    ("scripted.jit", True),
    ("scripted.torchscript", True),
    ("whole.pkl", True),
    ("C:\\models\\net.pt2", True),
    ("/tmp/some dir/net.pt", True),
    ("  model.pt  ", True),
    ("", False),
]


@pytest.mark.parametrize("source, expected", CASES)
def test_carries_code_table(source, expected):
    assert carries_code(source) is expected


def test_hf_carries_code_only_with_remote_code():
    assert carries_code("hf:org/model", trust_remote_code=True) is True
    assert carries_code("hf:org/model", trust_remote_code=False) is False
    assert carries_code("timm:resnet50", trust_remote_code=True) is False  # timm has no remote code


def test_an_existing_file_of_any_suffix_is_read_as_a_pickled_model(tmp_path):
    weights = tmp_path / "model.bin"
    assert carries_code(str(weights)) is False  # not there: a name, not a file
    weights.write_bytes(b"\x80\x02")
    assert is_model_file(str(weights)) and carries_code(str(weights)) is True


def test_windows_drive_is_not_a_module():
    assert is_factory("C:\\x\\m.py:Net") and not is_factory("C:\\x\\model.pt")
    assert not is_factory("C:model") and not is_factory("timm:resnet50")


@pytest.mark.parametrize("source, expected", [(s, e) for s, e in CASES if s.strip()])
def test_sessions_use_the_same_rule(source, expected):
    assert Session(model=source).points_at_code() is expected


def test_sources_import_neither_torch_nor_qt():
    code = ("import sys, inspector.core.sources, inspector.core.sources.seeds\n"
            "bad = [m for m in ('torch', 'PySide6', 'numpy') if m in sys.modules]\n"
            "assert not bad, bad\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
