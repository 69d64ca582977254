"""The command run by `main` in the test's own process, for cases that need only its exit code and what it
printed: no new interpreter, no torch import to pay (a real program stays where the process itself matters)."""

from __future__ import annotations

import contextlib
import io
import subprocess

from inspector.cli.dispatch import main


def run_here(*args: str) -> subprocess.CompletedProcess:
    """`network-inspector ARGS` run by `main` here: returncode, stdout and stderr as a program's would be."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return subprocess.CompletedProcess(["network-inspector", *args], code, out.getvalue(), err.getvalue())
