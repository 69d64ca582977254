"""The command run by `main` in the test's own process, for cases that need only its exit code and what it
printed: no new interpreter, no torch import to pay (a real program stays where the process itself matters);
and `refused_early`, the real program, for the argument errors said before torch or the model loads."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys

from inspector.cli.dispatch import main


def run_here(*args: str) -> subprocess.CompletedProcess:
    """`network-inspector ARGS` run by `main` here: returncode, stdout and stderr as a program's would be."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return subprocess.CompletedProcess(["network-inspector", *args], code, out.getvalue(), err.getvalue())


#: Run in a new interpreter: each argv of the JSON list in argv[1] by `main`, one after another; per command its
#: exit code, its stderr's lines, and which of torch, torchvision and the model loader were imported by then.
_ONE_INTERPRETER = """
import contextlib, io, json, sys
from inspector.cli.dispatch import main
answers = []
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(argv)
    answers.append([code, err.getvalue().splitlines(),
                    [m for m in ("torch", "torchvision", "inspector.core.sources.loader") if m in sys.modules]])
print(json.dumps(answers))
"""


def answers_in_one_interpreter(commands) -> list[tuple[int, list[str], list[str]]]:
    """`network-inspector ARGV` for each of `commands`, in turn, in one new interpreter (one start, not one each):
    per command its exit code, the lines it said on stderr and which of torch, torchvision and
    inspector.core.sources.loader (no model loads without it) had been imported when it answered."""
    done = subprocess.run([sys.executable, "-c", _ONE_INTERPRETER, json.dumps([list(c) for c in commands])],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return [tuple(answer) for answer in json.loads(done.stdout.splitlines()[-1])]


def refused_early(answer, line: str, torch_imported: bool = False) -> None:
    """The command of `answer` (`answers_in_one_interpreter`) exited 2 saying only `line`, before any model's code
    was imported and, unless `torch_imported` (a device is torch's to check), before torch."""
    code, said, imported = answer
    assert (code, said) == (2, [line])
    assert imported == (["torch"] if torch_imported else [])
