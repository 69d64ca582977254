"""Issue 53 item 7: `serve --ray ADDRESS` builds the atlases its clients start on that Ray cluster. A cluster that
does not answer is said when the server starts, in one line; the server's atlas builds go to the address it was
given (here one where no cluster is: the build fails naming it, in one line, and nothing is built)."""

from __future__ import annotations

import socket
import subprocess
import threading

import numpy as np
import pytest


def a_port_nothing_listens_on() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_ray_address_where_no_cluster_answers_stops_the_server_in_one_line(remote, tmp_path):
    port = a_port_nothing_listens_on()
    done = subprocess.run(remote.serve_command("--port", "0", "--token-file", str(tmp_path / "token"), "--ray",
                                               f"127.0.0.1:{port}"),
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and done.stdout == "" and len(lines) == 1, (done.returncode, lines)
    assert f"127.0.0.1:{port}" in lines[0]


@pytest.mark.parametrize("ray", [None, "dead"])
def test_the_servers_atlas_builds_go_where_it_was_told(tmp_path, ray):
    from PIL import Image

    from inspector.core.records.requests import AtlasRequest, ModelRequest
    from inspector.protocol.messages import Message
    from inspector.remote.data_root import DataRoot
    from inspector.remote.jobs import Jobs

    images = tmp_path / "images"
    images.mkdir()
    rng = np.random.default_rng(7)
    for i in range(3):
        Image.fromarray(rng.integers(0, 255, (32, 32, 3), dtype=np.uint8)).save(images / f"{i}.png")
    address = None if ray is None else f"127.0.0.1:{a_port_nothing_listens_on()}"
    jobs = Jobs(DataRoot(tmp_path), ray=address)
    sent: list[Message] = []
    build = AtlasRequest("build", str(tmp_path / "atlas"), ModelRequest("demo"), str(images), ("conv1",), top=2,
                         batch=2)
    jobs.run("atlas", "a1", build, threading.Event(), sent.append)
    last = sent[-1]
    if address is None:  # on this machine, as before
        assert last.kind == "result" and last.body.layers() == ["conv1"]
    else:
        assert last.kind == "failure" and address in last.body.message and "\n" not in last.body.message
        assert not (tmp_path / "atlas" / "atlas.json").exists()


@pytest.mark.parametrize("ray", [None, "dead"])
def test_the_servers_concepts_builds_go_where_it_was_told(tmp_path, ray):
    """A concepts build (`learn`) goes to the server's Ray address as its atlas builds do."""
    from PIL import Image

    from inspector.core.records.concepts import BuildConceptsRequest
    from inspector.core.records.requests import ModelRequest
    from inspector.protocol.messages import Message
    from inspector.remote.data_root import DataRoot
    from inspector.remote.jobs import Jobs

    images = tmp_path / "images"
    images.mkdir()
    rng = np.random.default_rng(7)
    for i in range(4):
        Image.fromarray(rng.integers(0, 255, (32, 32, 3), dtype=np.uint8)).save(images / f"{i}.png")
    address = None if ray is None else f"127.0.0.1:{a_port_nothing_listens_on()}"
    jobs = Jobs(DataRoot(tmp_path), ray=address)
    sent: list[Message] = []
    build = BuildConceptsRequest(ModelRequest("demo"), str(images), "relu3", 2, "nmf", str(tmp_path / "concepts"))
    jobs.run("learn", "c1", build, threading.Event(), sent.append)
    last = sent[-1]
    if address is None:  # on this machine
        assert last.kind == "result" and last.body == build.out_dir, last
        assert (tmp_path / "concepts" / "dictionary.safetensors").is_file()
    else:
        assert last.kind == "failure" and address in last.body.message and "\n" not in last.body.message
        assert not (tmp_path / "concepts" / "dictionary.safetensors").exists()
