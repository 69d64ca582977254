"""The atlas on a local Ray instance (2 CPUs), cancelled there and resumed there, equals the in-process
atlas."""

from __future__ import annotations

import contextlib
import os
import re

import numpy as np
import psutil
import pytest
import ray
import torch
from test_atlas import make_images

from inspector.core import load_model
from inspector.core.atlas import ray_pipeline, run_atlas, thumbnail_path
from inspector.core.common.errors import AtlasError, RunCancelled
from inspector.core.folder_jobs import host_copy, local_instance, on_host
from inspector.core.folder_jobs import ray as folder_ray


def test_ray_atlas_cancelled_and_resumed_equals_the_in_process_atlas_and_leaves_no_process(tmp_path, monkeypatch):
    """Cancelled on a local instance the caller starts with `local_instance` (as a test or a notebook does), and
    resumed there: the in-process atlas, and after the instance not one of Ray's processes left, neither under
    this process nor orphaned (issue 40, item 14: a MapWorker, parent 1, outlived the suite by 7 minutes;
    ray.shutdown() returns before the workers exit). One instance for both jobs (each start took 20 s here);
    the instance run_atlas starts for itself is the same `local_instance`, entered and left by the next test."""
    demo = load_model("demo")
    data = make_images(tmp_path / "data", 7)
    layers = "conv1,block.conv2,fc"
    here = run_atlas(demo, data, layers, 3, tmp_path / "here", batch=4)
    moved = []  # the caller's model is never moved to ship it (on a GPU, .cpu() would take it off the GPU)
    monkeypatch.setattr(type(demo.module), "cpu", lambda self, *a, **k: moved.append(self is demo.module)
                        or torch.nn.Module.cpu(self, *a, **k), raising=False)
    me = psutil.Process()
    seen: dict[int, tuple[psutil.Process, set]] = {}  # Ray's processes under this one while a job runs

    def look() -> None:  # a worker's command line changes with what it runs (ray::IDLE, then ray::MapWorker...)
        for p in me.children(recursive=True):
            if folder_ray._is_ray(p):
                with contextlib.suppress(psutil.Error):
                    seen.setdefault(p.pid, (p, set()))[1].add(os.path.basename(p.cmdline()[0])[:60])

    progressed = []
    with local_instance(num_cpus=2):
        # cancelled on Ray after its first batch (4 of the 8 files); the caller's instance stays up
        with pytest.raises(RunCancelled, match="after 4 of 8 images"):
            run_atlas(demo, data, layers, 3, tmp_path / "ray", batch=4, use_ray=True, cancel=lambda: look() or True)
        assert ray.is_initialized() and not (tmp_path / "ray" / "atlas.json").exists()
        # the same call resumes there
        there = run_atlas(demo, data, layers, 3, tmp_path / "ray", batch=4, use_ray=True,
                          progress=lambda d, t: look() or progressed.append((d, t)))
    assert not ray.is_initialized()
    assert_no_ray_process_left(me, seen)
    assert True not in moved
    assert progressed[0] == (4, 8) and progressed[-1] == (8, 8)  # it started from the saved half
    assert there["images"] == here["images"] == 7
    assert_same_atlas(there, here)
    assert thumbnail_path(tmp_path / "ray", "block.conv2", 5, 2).is_file()


def test_without_an_instance_the_job_starts_its_own_and_stops_it_cancelled_or_not(monkeypatch):
    """`--ray` without an address and no Ray started here: the job runs in `local_instance(LOCAL_CPUS)`, left
    when the job ends, cancelled or not (its processes' going is the test above's); with Ray started by the
    caller, in the caller's instance, left as it is."""
    calls = []

    @contextlib.contextmanager
    def instance(num_cpus=None):
        calls.append(("start", num_cpus, ray.is_initialized()))
        try:
            yield
        finally:
            calls.append("stop")

    def cancelled(*args):
        calls.append("job")
        raise RunCancelled("cancelled after 4 of 8 images")

    monkeypatch.setattr(folder_ray, "local_instance", instance)
    monkeypatch.setattr(folder_ray, "LOCAL_CPUS", 2)
    monkeypatch.setattr(ray_pipeline, "_run", cancelled)
    with pytest.raises(RunCancelled):
        ray_pipeline.run_on_ray(None, None, None, "cpu", None, None, None)
    assert calls == [("start", 2, False), "job", "stop"]
    monkeypatch.setattr(ray_pipeline, "_run", lambda *args: calls.append("job") or "done")
    assert ray_pipeline.run_on_ray(None, None, None, "cpu", None, None, None) == "done"
    assert calls[3:] == [("start", 2, False), "job", "stop"]
    monkeypatch.setattr(ray, "is_initialized", lambda: True)  # the caller's instance: used as it is
    assert ray_pipeline.run_on_ray(None, None, None, "cpu", None, None, None) == "done"
    assert calls[6:] == ["job"]


def assert_no_ray_process_left(me, seen: dict) -> None:
    """The job's Ray processes were seen (its GCS, raylet and the model replica, a MapWorker), and none is
    left: not under this process, not orphaned (a zombie is an exit not yet collected: gone)."""
    def alive(p) -> bool:
        try:
            return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    names = " ".join(sorted(set().union(*(shown for _, shown in seen.values()))))
    assert all(word in names for word in ("gcs_server", "raylet", "MapWorker")), names
    left = [(p.pid, p.ppid(), sorted(shown)) for p, shown in seen.values() if alive(p)]
    left += [(p.pid, p.ppid(), " ".join(p.cmdline())[:80]) for p in me.children(recursive=True)
             if p.pid not in seen and folder_ray._is_ray(p) and alive(p)]
    assert left == []


def assert_same_atlas(there: dict, here: dict) -> None:
    """The same images, top K (images and positions), scores and statistics to float32 rounding."""
    assert there["images"] == here["images"] and there["skipped"] == here["skipped"]
    assert list(there["layers"]) == ["conv1", "block.conv2", "fc"]
    for name, layer in here["layers"].items():
        other = there["layers"][name]
        assert [[(e["image"], e["y"], e["x"]) for e in c] for c in other["top"]] == \
               [[(e["image"], e["y"], e["x"]) for e in c] for c in layer["top"]]
        np.testing.assert_allclose([[e["score"] for e in c] for c in other["top"]],
                                   [[e["score"] for e in c] for c in layer["top"]], rtol=1e-5, atol=1e-6)
        for key in ("mean", "std", "frac_positive"):
            np.testing.assert_allclose(other[key], layer[key], rtol=1e-5, atol=1e-6)


def test_joining_a_cluster_sends_its_token_where_there_is_one(tmp_path, monkeypatch):
    """`ray start` (Ray >= 2.59) starts clusters that require the token it writes to ~/.ray/auth_token,
    and a driver joining one does not send it unless RAY_AUTH_MODE=token (found joining one here)."""
    from inspector.core.folder_jobs.ray import _token_auth_where_there_is_a_token

    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        monkeypatch.setenv(name, "")  # remembered as they were, and put back after the test
        monkeypatch.delenv(name)
    _token_auth_where_there_is_a_token()
    assert "RAY_AUTH_MODE" not in os.environ  # no token anywhere: nothing to send
    (tmp_path / ".ray").mkdir()
    (tmp_path / ".ray" / "auth_token").write_text("secret")
    _token_auth_where_there_is_a_token()
    assert os.environ["RAY_AUTH_MODE"] == "token"
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")  # the user's own choice stays
    _token_auth_where_there_is_a_token()
    assert os.environ["RAY_AUTH_MODE"] == "disabled"
    monkeypatch.delenv("RAY_AUTH_MODE")
    (tmp_path / ".ray" / "auth_token").unlink()
    monkeypatch.setenv("RAY_AUTH_TOKEN", "secret")
    _token_auth_where_there_is_a_token()
    assert os.environ["RAY_AUTH_MODE"] == "token"


def test_an_address_where_nothing_answers_is_a_clear_error_at_once_and_writes_nothing(tmp_path):
    """Ray retried such an address for more than five minutes (tried: --ray 127.0.0.1:1)."""
    import socket
    import time

    demo = load_model("demo")
    data = make_images(tmp_path / "data", 2)
    with socket.socket() as free:  # a port nothing listens on
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(AtlasError, match=f"Nothing answers at 127.0.0.1:{port}.*ray start --head"):
        run_atlas(demo, data, "conv1", 2, tmp_path / "out", ray_address=f"127.0.0.1:{port}")
    assert time.monotonic() - started < 30 and not (tmp_path / "out").exists()
    with pytest.raises(AtlasError, match="Cannot read the Ray address 'host:port'"):
        run_atlas(demo, data, "conv1", 2, tmp_path / "out", ray_address="host:port")


def _server(reply: bytes | None):
    """A local TCP server that answers every connection with `reply` (None: says nothing), on a thread."""
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    held = []

    def serve():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            held.append(conn)
            conn.recv(64)
            if reply is not None:
                conn.sendall(reply)

    threading.Thread(target=serve, daemon=True).start()
    return listener, listener.getsockname()[1]


@pytest.mark.parametrize("reply, says", [
    (b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", "answers, but not as a Ray cluster's head"),
    (None, "did not answer as a Ray cluster's head within 2 s"),
])
def test_an_address_where_something_else_answers_fails_within_seconds(tmp_path, reply, says):
    """Ray waited past 150 s on a port where a web server (or a silent one) answered."""
    import time

    from inspector.core.folder_jobs import check_address

    listener, port = _server(reply)
    try:
        started = time.monotonic()
        with pytest.raises(AtlasError, match=f"127.0.0.1:{port}.*{re.escape(says)}"):
            check_address(f"127.0.0.1:{port}", timeout_s=2.0)
        assert time.monotonic() - started < 10
    finally:
        listener.close()


def test_a_grpc_head_passes_the_check_and_ray_client_addresses_are_refused():
    from inspector.core.folder_jobs import check_address

    settings = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"  # an HTTP/2 server's first frame: SETTINGS
    listener, port = _server(settings)
    try:
        check_address(f"127.0.0.1:{port}", timeout_s=2.0)  # answers as a gRPC server does: no error
    finally:
        listener.close()
    with pytest.raises(AtlasError, match=r"ray://.*not supported \(they need ray\[client\]"):
        check_address("ray://127.0.0.1:10001")


def test_a_host_copy_has_the_models_values_on_the_cpu_and_leaves_the_model_as_it_was():
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU()).eval()
    model[0].bias.requires_grad_(False)
    x = torch.randn(2, 3, 8, 8, generator=torch.Generator().manual_seed(0))
    want = model(x)
    copied = host_copy(model)
    assert on_host(model) is model  # on the CPU already: shipped as it is
    for (name, a), (other, b) in zip(model.state_dict(keep_vars=True).items(),
                                     copied.state_dict(keep_vars=True).items()):
        assert name == other and torch.equal(a, b) and a.data_ptr() != b.data_ptr()
        assert type(a) is type(b) and a.requires_grad == b.requires_grad and b.device.type == "cpu"
    assert torch.equal(copied(x), want)
    copied[0].weight.data.zero_()
    assert torch.equal(model(x), want)  # the copy owns its values


@pytest.mark.parametrize("address", ["a" * 100000, "a" * 64 + ".example:6379", "bad\0host:6379", "é" * 300,
                                     "127.0.0.1:99999", "[::1"])
def test_an_address_no_host_can_have_is_one_line_of_the_projects_kind_and_writes_nothing(tmp_path, address):
    """Issue 40, item 9: ray_address='a'*100000 raised UnicodeError (the IDNA codec's 'label too long')."""
    demo = load_model("demo")
    data = make_images(tmp_path / "data", 2)
    with pytest.raises(AtlasError, match="Cannot read the Ray address") as error:
        run_atlas(demo, data, "conv1", 2, tmp_path / "out", ray_address=address)
    assert len(str(error.value)) < 300 and "\n" not in str(error.value) and "\0" not in str(error.value)
    assert not (tmp_path / "out").exists()
