"""Issue 53: what `network-inspector serve` refuses, each against a real server process: a missing, wrong or
query-string token (401, before any engine work), a public address without TLS, an oversize message, 1,000
unreadable messages (one `error` each, the connection usable after), a burst past the rate limit, one connection
too many, a path outside the data root (a symlink too), and code a client asks the server to trust. And the
client: a server of another protocol version, and TLS."""

from __future__ import annotations

import json
import random
import shutil
import socket
import subprocess
import threading
import time

import numpy as np
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from inspector.core.records.requests import AttributionRequest, ModelRequest, RunRequest
from inspector.protocol import frames
from inspector.protocol.messages import Message, to_wire
from inspector.remote.client import EngineClient
from inspector.remote.errors import EngineError

FUZZED = 1000
MAX_CONNECTIONS = 3


@pytest.fixture(scope="module")
def served(remote, tmp_path_factory):
    with remote.engine_server(tmp_path_factory.mktemp("guarded"), "--max-message", "1",
                              "--max-connections", str(MAX_CONNECTIONS)) as server:
        yield server


def served_so_far(server) -> int:
    with server.client() as engine:
        return engine.hello["served"]


@pytest.mark.parametrize("headers, query", [({}, ""), ({"Authorization": "Bearer " + "x" * 43}, ""),
                                            ({}, "?token={token}"), ({"Authorization": "{token}"}, "")],
                         ids=["no-token", "wrong-token", "token-in-query-string", "not-bearer"])
def test_a_connection_without_the_token_is_refused_401_before_any_engine_work(served, headers, query):
    before = served_so_far(served)
    headers = {k: v.format(token=served.token) for k, v in headers.items()}
    with pytest.raises(InvalidStatus) as refused:
        with connect(served.url + "/" + query.format(token=served.token), additional_headers=headers,
                     open_timeout=10):
            pass
    assert refused.value.response.status_code == 401
    assert b"Authorization: Bearer TOKEN" in refused.value.response.body
    with pytest.raises(EngineError, match="refused the connection \\(401\\)"):
        EngineClient(served.url, "y" * 43, timeout=10)
    assert served_so_far(served) == before


def test_a_public_address_without_tls_is_refused_in_one_line(remote, tmp_path):
    done = subprocess.run(remote.serve_command("--host", "0.0.0.0", "--port", "0", "--token-file",
                                               str(tmp_path / "token")),
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode != 0 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "0.0.0.0 is not a loopback address" in lines[0] and "--tls-cert" in lines[0], lines


def test_an_oversize_message_closes_that_connection_and_the_server_serves_on(served):
    with served.client() as engine:
        engine.ws.send(to_wire(Message("devices", "big", None))[0].replace('"frames":0', '"frames":1'))
        with pytest.raises(ConnectionClosed) as closed:
            engine.ws.send(b"\0" * (2 * 2**20))  # over --max-message 1 (MiB)
            engine.ws.recv(timeout=10)
            engine.ws.recv(timeout=10)
    assert closed.value.rcvd is None or closed.value.rcvd.code == 1009
    with served.client() as engine:
        assert engine.call("devices")


def test_a_message_whose_frames_hold_more_than_max_message_together_is_refused(served):
    array = np.zeros(600_000 // 4, dtype=np.float32)  # 0.6 MB a frame, under --max-message 1 (MiB); 1.8 MB in all
    with served.client() as engine:
        engine.ws.send(json.dumps({"v": 1, "kind": "devices", "id": "big", "body": None, "frames": 3}))
        for i in range(3):
            engine.ws.send(frames.pack("big", i, array))
        said = list(engine.events("big"))
        assert engine.call("devices")
    assert [e.kind for e in said] == ["error"] and "more than 1,048,576 bytes" in said[0].body


def test_a_client_that_leaves_its_answers_unread_is_closed_and_the_server_serves_on(served):
    from inspector.core.runspec import RunSpec

    with served.client() as engine:
        info = engine.call("load", ModelRequest("demo"))
        spec = RunSpec.make(info.tree.select("all"), ["input", "output", "grad_output"])
        request = RunRequest(ModelRequest("demo"), "sample:star", "cpu", spec)  # 4.6 MB of arrays a result
        try:
            for _ in range(45):  # under the rate limit, each taken up before the next: 200 MB unread
                engine.send("capture", request)
                time.sleep(0.04)
        except EngineError:
            pass  # closed already
        code = None
        for _ in range(10_000):
            try:
                engine.ws.recv(timeout=20)
            except ConnectionClosed as closed:
                code = closed.rcvd.code if closed.rcvd else None
                break
    assert code == 1008
    assert "reads its answers too slowly" in served.stderr.read_text()
    with served.client() as engine:
        assert engine.call("devices")


def fuzzed(rng: random.Random, i: int) -> list:
    """One unreadable message (its text frame and any array frames): random JSON, a wrong kind, another
    version, a bad array header, or a truncated frame."""
    key = f"f{i}"
    good = {"v": 1, "kind": "devices", "id": key, "body": None, "frames": 0}
    case = rng.randrange(9)
    if case == 0:  # random JSON (or not JSON at all)
        return [rng.choice([json.dumps(random_value(rng, 3)), "{" * rng.randrange(1, 5000),
                            "".join(chr(rng.randrange(32, 0x2FFF)) for _ in range(rng.randrange(60))),
                            '{"v": 1, "kind": "run", "id": "x", "body": NaN, "frames": 0}'])]
    if case == 1:  # a kind that is no request, or none at all
        return [json.dumps({**good, "kind": rng.choice(["result", "hello", "progress", "error", "accepted",
                                                        "explode", "", 7])})]
    if case == 2:  # a body the kind does not take (a cancel's is a text: the id to stop)
        kind, body = rng.choice(["load", "run", "attribute", "cancel"]), random_value(rng, 2)
        return [json.dumps({**good, "kind": kind, "body": [body] if kind == "cancel" else body})]
    if case == 3:  # another version
        return [json.dumps({**good, "v": rng.choice([0, 2, 99, "1", None, 1.5])})]
    if case == 4:  # missing or extra fields
        text = dict(good)
        text.pop(rng.choice(list(text))) if rng.random() < 0.5 else text.update(extra=1)
        return [json.dumps(text)]
    array = np.arange(rng.randrange(1, 50), dtype=np.float32)
    frame = frames.pack(key, 0, array)
    if case == 5:  # a bad array header
        header = {"v": 1, "id": key, "index": 0, "dtype": "<f4", "shape": [len(array)]}
        header[rng.choice(list(header))] = rng.choice(["|O", -1, [1, -2], 2, "other", None])
        data = json.dumps(header).encode()
        bad = rng.choice([len(data).to_bytes(4, "big") + data + array.tobytes(), b"\xff\xff\xff\xff" + data,
                          b"\0\0", len(data).to_bytes(4, "big") + b"not json"[:len(data)].ljust(len(data))])
        return [json.dumps({**good, "frames": 1}), bad]
    if case == 6:  # a frame cut short
        return [json.dumps({**good, "frames": 1}), frame[:rng.randrange(1, len(frame))]]
    if case == 7:  # frames missing: the next message comes first
        return [json.dumps({**good, "frames": 3}), frame]
    return [json.dumps({**good, "frames": 1, "body": {"$array": rng.choice([1, -1, "0"])}}), frame]


def random_value(rng: random.Random, depth: int):
    pick = rng.randrange(7 if depth else 4)
    if pick == 0:
        return rng.randrange(-10**12, 10**12)
    if pick == 1:
        return rng.random() * 1e6
    if pick == 2:
        return "".join(chr(rng.randrange(32, 127)) for _ in range(rng.randrange(12)))
    if pick == 3:
        return rng.choice([None, True, False])
    if pick == 4:
        return [random_value(rng, depth - 1) for _ in range(rng.randrange(4))]
    if pick == 5:
        return {rng.choice(["$record", "$array", "$float", "$tuple", "v", "id", "kind", "frames"]):
                random_value(rng, depth - 1) for _ in range(rng.randrange(3))}
    return {"$record": rng.choice(["RunRequest", "os.system", "Failure", "ModelRequest"]),
            "fields": {"source": random_value(rng, 0)}}


def test_a_thousand_unreadable_messages_get_one_error_each_and_the_connection_serves_on(served):
    rng = random.Random(53)
    started = time.monotonic()
    with served.client(timeout=60) as engine:
        for i in range(FUZZED):
            for part in fuzzed(rng, i):
                engine.ws.send(part)
        devices = engine.call("devices")  # the last fuzzed message is read by now
        said = [event for kept in engine._kept.values() for event in kept]
    assert devices[0] == ["cpu", "CPU"]
    assert {event.kind for event in said} == {"error"}
    assert len(said) == FUZZED
    assert all(isinstance(e.body, str) and "\n" not in e.body and e.body for e in said)
    assert time.monotonic() - started < 30


def test_requests_past_the_rate_limit_get_an_error_each(served):
    with served.client() as engine:
        keys = [engine.send("devices") for _ in range(200)]
        last = {key: [e.kind for e in engine.events(key)][-1] for key in keys}
        refused = [e.body for e in engine._kept.get("-", [])]
    assert set(last.values()) == {"result", "error"} and list(last.values()).count("error") >= 50
    assert not refused
    time.sleep(1.0)  # the bucket fills again
    with served.client() as engine:
        assert engine.call("devices")


def test_one_connection_too_many_is_refused_503(served):
    clients = [served.client() for _ in range(MAX_CONNECTIONS)]
    try:
        with pytest.raises(InvalidStatus) as refused:
            with connect(served.url, additional_headers={"Authorization": f"Bearer {served.token}"},
                         open_timeout=10):
                pass
        assert refused.value.response.status_code == 503
    finally:
        for client in clients:
            client.close()
    for _ in range(50):  # the server counts the closed ones out as their handlers end
        try:
            with served.client() as engine:
                assert engine.call("devices")
            break
        except EngineError:
            time.sleep(0.1)
    else:
        raise AssertionError("no connection taken after the others closed")


def test_paths_outside_the_data_root_are_refused_links_followed(served, tmp_path):
    from PIL import Image

    image = tmp_path / "outside.png"
    Image.new("RGB", (32, 32), (200, 30, 30)).save(image)
    inside = served.root / "inside.png"
    shutil.copy(image, inside)
    link = served.root / "link.png"
    link.unlink(missing_ok=True)
    link.symlink_to(image)
    (served.root / "weights.safetensors").unlink(missing_ok=True)
    (served.root / "weights.safetensors").symlink_to(tmp_path / "w.safetensors")
    refused = [RunRequest(ModelRequest("demo"), str(image)), RunRequest(ModelRequest("demo"), "../outside.png"),
               RunRequest(ModelRequest("demo"), "link.png"), RunRequest(ModelRequest("demo"), str(tmp_path / "*.png")),
               RunRequest(ModelRequest("demo", weights="weights.safetensors"), "inside.png"),
               RunRequest(ModelRequest(str(tmp_path / "model.pt")), "inside.png"),
               RunRequest(ModelRequest("hf:" + str(tmp_path)), "inside.png"),
               AttributionRequest(ModelRequest("demo"), "inside.png", options=(("baseline", str(image)),))]
    with served.client() as engine:
        for request in refused:
            kind = "attribute" if isinstance(request, AttributionRequest) else "run"
            with pytest.raises(EngineError, match="outside this server's data root") as said:
                engine.call(kind, request)
            assert "\n" not in str(said.value)
        assert engine.call("run", RunRequest(ModelRequest("demo"), "inside.png")).result.predictions


def test_an_atlas_reads_and_writes_inside_the_data_root_only(served, tmp_path):
    from PIL import Image

    from inspector.core.records.requests import AtlasRequest

    outside = tmp_path / "images"
    outside.mkdir()
    Image.new("RGB", (32, 32), (10, 200, 30)).save(outside / "a.png")
    mixed = served.root / "mixed"
    mixed.mkdir()
    shutil.copy(outside / "a.png", mixed / "inside.png")
    (mixed / "elsewhere").symlink_to(outside)  # a linked folder the build would follow
    asked = [(AtlasRequest("build", "atlas1", ModelRequest("demo"), str(outside), ("conv1",)), "The data folder"),
             (AtlasRequest("build", str(tmp_path / "atlas"), ModelRequest("demo"), "mixed", ("conv1",)),
              "The atlas folder"),
             (AtlasRequest("build", "atlas2", ModelRequest("demo"), "mixed", ("conv1",)), "An image of the data folder"),
             (AtlasRequest("open", str(tmp_path)), "The atlas folder")]
    with served.client() as engine:
        for request, what in asked:
            with pytest.raises(EngineError, match=f"{what} .* is outside this server's data root"):
                engine.call("atlas", request)
    assert not (served.root / "atlas2").exists() and not (tmp_path / "atlas").exists()


def test_code_a_client_trusts_is_not_run_by_a_server_that_does_not(served):
    marker = served.root / "marker.txt"
    (served.root / "make_marker.py").write_text(
        "import pathlib\n"
        f"pathlib.Path({str(marker)!r}).write_text('ran')\n"
        "import torch\n"
        "class Net(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return x\n")
    with served.client() as engine:
        for request in (ModelRequest("make_marker.py:Net", trust=True), ModelRequest("os:getcwd", trust=True)):
            with pytest.raises(EngineError, match="not started with --trust") as said:
                engine.call("load", request)
            assert said.value.failure.kind == "UntrustedCodeError"
        with pytest.raises(EngineError, match="not started with --trust"):
            engine.call("run", RunRequest(ModelRequest("make_marker.py:Net", trust=True), "sample:star"))
    assert not marker.exists()


def test_a_server_of_another_protocol_version_is_refused_naming_both(tmp_path):
    from websockets.sync.server import serve

    def hello_v2(ws):
        ws.send(json.dumps({"v": 2, "kind": "hello", "id": "hello", "body": None, "frames": 0}))
        try:
            ws.recv(timeout=5)
        except (TimeoutError, ConnectionClosed):
            pass

    with serve(hello_v2, "127.0.0.1", 0) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        port = server.socket.getsockname()[1]
        try:
            with pytest.raises(EngineError) as refused:
                EngineClient(f"ws://127.0.0.1:{port}", "t" * 43, timeout=10)
        finally:
            server.shutdown()
            thread.join(10)
    assert "protocol version 2" in str(refused.value) and "version 1" in str(refused.value)
    assert "\n" not in str(refused.value)


def test_an_engine_that_is_not_there_is_said_in_one_line():
    with socket.socket() as probe:  # a port nothing listens on (bound, then let go)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(EngineError, match=f"Cannot reach the engine at ws://127.0.0.1:{port}") as said:
        EngineClient(f"ws://127.0.0.1:{port}", "t" * 43, timeout=5)
    assert "\n" not in str(said.value)


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command to make a certificate")
def test_tls_serves_wss_to_a_client_that_trusts_the_certificate(remote, tmp_path):
    import ssl

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    with remote.engine_server(tmp_path, "--tls-cert", str(cert), "--tls-key", str(key)) as server:
        assert server.url.startswith("wss://127.0.0.1:")
        with server.client(ssl=ssl.create_default_context(cafile=str(cert))) as engine:
            assert engine.call("devices")[0] == ["cpu", "CPU"]
        with pytest.raises(EngineError, match="CERTIFICATE_VERIFY_FAILED"):  # a client that does not trust it
            EngineClient(server.url, server.token, timeout=10)


def test_a_port_in_use_is_said_in_one_line(remote, served, tmp_path):
    port = served.url.rsplit(":", 1)[1]
    done = subprocess.run(remote.serve_command("--port", port, "--token-file", str(tmp_path / "token")),
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode != 0 and len(lines) == 1 and f"Cannot listen on 127.0.0.1:{port}" in lines[0], lines
