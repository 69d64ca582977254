"""Issue 52 item 1: a stuck test ends the run as a failure that names it, within the per-test limit.

Under load an xdist worker died and the run then waited 20 minutes with both workers idle until it was killed
(pytest-xdist 3.8 with --dist loadfile waits forever for a replaced worker's file). The project's pytest
settings (pyproject.toml: faulthandler_timeout, faulthandler_exit_on_timeout, --max-worker-restart=0) are run
here on a stuck test in a real pytest process: one stuck in C with its signals blocked, which no SIGALRM-based
limit could interrupt."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[3]

STUCK = '''import signal, time

def test_before():
    pass

def test_stuck():
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM, signal.SIGINT, signal.SIGTERM})
    time.sleep(1000)  # in C, signals blocked: only a thread that needs no GIL can end it

def test_after():
    pass
'''

QUICK = '''def test_quick():
    assert 1 + 1 == 2
'''


def _run(folder: Path, *options: str) -> tuple[subprocess.CompletedProcess, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", "-c", str(PROJECT / "pyproject.toml"), "--rootdir",
                           str(folder), "-p", "no:cacheprovider", "-o", "faulthandler_timeout=4", *options,
                           str(folder)], capture_output=True, text=True, timeout=240, env=env, cwd=folder)
    return done, time.monotonic() - started


def test_a_stuck_test_ends_the_run_named_with_every_stack(tmp_path):
    (tmp_path / "test_stuck.py").write_text(STUCK)
    (tmp_path / "test_quick.py").write_text(QUICK)
    done, took = _run(tmp_path, "-n", "2")
    out = done.stdout + done.stderr
    assert done.returncode == 1, out[-3000:]
    assert "crashed while running 'test_stuck.py::test_stuck'" in out, out[-3000:]
    assert "Timeout (0:00:04)!" in out and 'test_stuck.py", line 8 in test_stuck' in out, out[-3000:]
    assert "FAILED test_stuck.py::test_stuck" in out and "test_quick.py" not in out.split("short test summary")[-1]
    assert took < 120, took  # seconds: the run's start, 4 s of the stuck test, its end; never the 1000 s sleep


def test_without_workers_a_stuck_test_ends_the_process_with_its_stack(tmp_path):
    (tmp_path / "test_stuck.py").write_text(STUCK)
    done, took = _run(tmp_path, "-n", "0")
    out = done.stdout + done.stderr
    assert done.returncode != 0 and "Timeout (0:00:04)!" in out, out[-3000:]
    assert 'test_stuck.py", line 8 in test_stuck' in out, out[-3000:]
    assert took < 120, took
