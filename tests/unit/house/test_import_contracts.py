"""The house's plan, kept: the import-linter contracts in pyproject.toml hold (no import circle at
any depth, cli -> bench/selftest -> gui -> core -> demo, a Qt-free engine, torch-free records and
source names, torch-free graph records, the atlas, the folder jobs, the graph and model sources in layers, the folder jobs behind one face, the atlas and
the concepts independent)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_import_contracts_are_kept():
    done = subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
                                                 "sys.exit(lint_imports_command())"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    written = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    assert "0 broken" in done.stdout and f"{len(written)} kept" in done.stdout  # every contract written is checked

