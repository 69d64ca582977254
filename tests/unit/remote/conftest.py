"""A real `network-inspector serve` process on 127.0.0.1 and the real client: the servers the remote tests share.

Every wait is bounded: the server's first line within STARTUP_S, its end within STOP_S (then it is killed)."""

from __future__ import annotations

import re
import select
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest

STARTUP_S = 60.0
STOP_S = 10.0


@dataclass
class Served:
    process: subprocess.Popen
    url: str
    token: str
    root: Path
    line: str
    stderr: Path

    def client(self, **kwargs):
        from inspector.remote.client import EngineClient

        return EngineClient(self.url, self.token, timeout=kwargs.pop("timeout", 30.0), **kwargs)


def first_line(process: subprocess.Popen, timeout: float) -> str:
    """The process's first line of stdout, waited for at most `timeout` s ("" when it ended without one)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], min(0.5, max(0.0, deadline - time.monotonic())))
        if ready:
            return process.stdout.readline()
        if process.poll() is not None:
            return ""
    raise AssertionError(f"the server said nothing within {timeout:g} s")


def serve_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "inspector", "serve", *args]


@contextmanager
def engine_server(folder: Path, *extra: str):
    """`serve --port 0` with its token file and data root (folder/data) in `folder`; stopped (SIGTERM, then
    SIGKILL) whatever happens."""
    root = folder / "data"
    root.mkdir(parents=True, exist_ok=True)
    stderr = folder / "stderr.txt"
    with open(stderr, "w") as err:
        process = subprocess.Popen(serve_command("--port", "0", "--token-file", str(folder / "token"),
                                                 "--data-root", str(root), *extra),
                                   stdout=subprocess.PIPE, stderr=err, text=True, cwd=folder)
    try:
        line = first_line(process, STARTUP_S)
        found = re.search(r"(wss?://[^\s;]+)", line)
        assert found, f"no address in {line!r}; stderr: {stderr.read_text()[-2000:]}"
        yield Served(process, found.group(1), (folder / "token").read_text().strip(), root.resolve(), line, stderr)
    finally:
        stop(process)


def stop(process: subprocess.Popen, sig: int = signal.SIGTERM) -> int:
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(STOP_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(STOP_S)
    if process.stdout is not None:
        process.stdout.close()
    return process.returncode


@pytest.fixture(scope="session")
def remote():
    """The helpers above, for the test modules (tests are not packages: a fixture hands them over)."""
    return SimpleNamespace(engine_server=engine_server, first_line=first_line, stop=stop, serve_command=serve_command)


@pytest.fixture(scope="module")
def engine(served):
    """A client of the module's `served` server with the demo model loaded there (a module that needs another keeps
    its own `engine`)."""
    from inspector.core.records.requests import ModelRequest

    with served.client(timeout=120.0) as client:
        client.call("load", ModelRequest("demo"))
        yield client
