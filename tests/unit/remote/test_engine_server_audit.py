"""Issue 53: the server opens no file outside its --data-root for what clients send. A real `serve` process runs
under a Python audit hook (PEP 578) that writes down every file opened once its socket is bound; a client then
sends 1,000 unreadable messages and requests naming files outside the data root (absolute paths, `..`, a link out,
a weights file, a model file, a Hugging Face folder, an attribution baseline, an atlas folder). Every file it
opened after that is inside the data root or part of the installed program (Python, its packages, this project)."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from test_engine_server_security import FUZZED, fuzzed

import inspector
from inspector.core.records.requests import AtlasRequest, AttributionRequest, ModelRequest, RunRequest
from inspector.remote.errors import EngineError

#: the server with the hook: every "open" after the first socket.bind is written down (paths only; a file
#: descriptor or the log itself is not a file a request named)
AUDITED = r"""
import os, sys
log = open(os.environ["INSPECTOR_AUDIT_LOG"], "a", buffering=1, encoding="utf-8")
bound = []
def hook(event, args):
    if event == "socket.bind":
        bound.append(True)
    elif bound and event == "open" and isinstance(args[0], (str, bytes)):
        log.write(os.fsdecode(args[0]) + "\n")
sys.addaudithook(hook)
sys.argv = ["network-inspector", *sys.argv[1:]]
from inspector.__main__ import entry
sys.exit(entry())
"""


@pytest.fixture()
def audited(remote, tmp_path):
    root = (tmp_path / "data").resolve()
    root.mkdir()
    log = tmp_path / "opened.txt"
    env = {**os.environ, "INSPECTOR_AUDIT_LOG": str(log)}
    with open(tmp_path / "stderr.txt", "w") as err:
        process = subprocess.Popen([sys.executable, "-c", AUDITED, "serve", "--port", "0", "--token-file",
                                    str(tmp_path / "token"), "--data-root", str(root)],
                                   stdout=subprocess.PIPE, stderr=err, text=True, cwd=tmp_path, env=env)
    try:
        line = remote.first_line(process, 60.0)
        url = re.search(r"(wss?://[^\s;]+)", line)
        assert url, f"no address in {line!r}: {(tmp_path / 'stderr.txt').read_text()[-2000:]}"
        from inspector.remote.client import EngineClient

        yield (lambda: EngineClient(url.group(1), (tmp_path / "token").read_text().strip(), timeout=60.0)), root, log
    finally:
        remote.stop(process)


def installed_places() -> tuple[str, ...]:
    """Where the program itself lies: Python's library, the environment's packages, this project's package and
    the resources it ships (the demo model's description, the sample images)."""
    from inspector.demo.paths import resources_dir

    paths = {sysconfig.get_paths()[name] for name in ("stdlib", "platstdlib", "purelib", "platlib")}
    places = (*paths, sys.prefix, sys.base_prefix, Path(inspector.__file__).parent, resources_dir())
    return tuple(str(Path(p).resolve()) for p in places)


def test_nothing_a_client_sends_opens_a_file_outside_the_data_root(audited, tmp_path):
    from PIL import Image

    connect, root, log = audited
    outside = tmp_path / "outside"
    outside.mkdir()
    Image.new("RGB", (16, 16), (200, 30, 30)).save(outside / "secret.png")
    (outside / "model.pt").write_bytes(b"not a model")
    (root / "link.png").symlink_to(outside / "secret.png")
    Image.new("RGB", (16, 16), (20, 30, 200)).save(root / "inside.png")
    named = [("run", RunRequest(ModelRequest("demo"), str(outside / "secret.png"))),
             ("run", RunRequest(ModelRequest("demo"), "../outside/secret.png")),
             ("run", RunRequest(ModelRequest("demo"), "link.png")),
             ("run", RunRequest(ModelRequest("demo", weights=str(outside / "model.pt")), "inside.png")),
             ("load", ModelRequest(str(outside / "model.pt"))),
             ("load", ModelRequest("hf:" + str(outside))),
             ("attribute", AttributionRequest(ModelRequest("demo"), "inside.png",
                                              options=(("baseline", str(outside / "secret.png")),))),
             ("atlas", AtlasRequest("build", "atlas", ModelRequest("demo"), str(outside), ("conv1",))),
             ("atlas", AtlasRequest("open", str(outside)))]
    rng = random.Random(578)
    with connect() as engine:
        for i in range(FUZZED):
            for part in fuzzed(rng, i):
                engine.ws.send(part)
        assert engine.call("devices")[0] == ["cpu", "CPU"]  # every fuzzed message read by now
        for kind, request in named:
            with pytest.raises(EngineError, match="outside this server's data root"):
                engine.call(kind, request)
        assert engine.call("run", RunRequest(ModelRequest("demo"), "inside.png")).result.predictions
    # the server works in its data root (a relative path a client names is read from there)
    opened = [os.path.realpath(root / line) for line in log.read_text(encoding="utf-8").splitlines() if line]
    assert any(line.endswith("inside.png") for line in opened)  # the hook sees what the server reads
    allowed = (str(root), *installed_places())
    outsiders = sorted({p for p in opened if not p.startswith(allowed) and not p.startswith(("/proc/", "/sys/",
                                                                                             "/dev/"))})
    assert outsiders == []
    assert not any(p.startswith(str(outside.resolve())) for p in opened)
