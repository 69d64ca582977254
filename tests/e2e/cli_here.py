"""The command run by `main` in the test's own process, for cases that need only its exit code and what it
printed: no new interpreter, no torch import to pay (a real program stays where the process itself matters);
and `refused_early`, the real program, for the argument errors said before torch or the model loads."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys

from inspector.cli.dispatch import main


def run_here(*args: str) -> subprocess.CompletedProcess:
    """`network-inspector ARGS` run by `main` here: returncode, stdout and stderr as a program's would be."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return subprocess.CompletedProcess(["network-inspector", *args], code, out.getvalue(), err.getvalue())


def refused_early(argv, line: str, torch_imported: bool = False) -> None:
    """`network-inspector ARGV` exits 2 saying only `line`, and -X importtime shows that no model's code was
    imported (the loader, torchvision) and, unless `torch_imported` (a device is torch's to check), not torch."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "inspector", *argv],
                          capture_output=True, text=True, timeout=120)
    said = [text for text in done.stderr.splitlines() if not text.startswith("import time:")]
    imported = {text.split("|")[-1].strip() for text in done.stderr.splitlines() if text.startswith("import time:")}
    assert done.returncode == 2 and said == [line], done.stderr[-800:]
    assert "inspector.core.sources.loader" not in imported and "torchvision" not in imported
    assert ("torch" in imported) == torch_imported
