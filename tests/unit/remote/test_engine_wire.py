"""Issue 53: what the connection itself costs a remote run. A run's answer is megabytes of float arrays: compressed
(websockets offers permessage-deflate by default, on both ends) they would cost tens of milliseconds to deflate
and inflate for little gain, so neither end negotiates it, whatever the other offers; and small messages go out
at once (TCP_NODELAY: no Nagle delay on a request)."""

from __future__ import annotations

import socket

import pytest

EXTENSIONS = "Sec-WebSocket-Extensions"


@pytest.fixture(scope="module")
def served(remote, tmp_path_factory):
    with remote.engine_server(tmp_path_factory.mktemp("wire")) as server:
        yield server


def test_the_client_offers_no_compression_and_gets_none(served):
    with served.client() as engine:
        assert engine.ws.request.headers.get(EXTENSIONS) is None
        assert engine.ws.response.headers.get(EXTENSIONS) is None
        assert engine.ws.protocol.extensions == []
        assert engine.ws.socket.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


def test_the_server_accepts_no_compression_from_a_client_that_offers_it(served):
    from websockets.sync.client import connect

    with connect(served.url, additional_headers={"Authorization": f"Bearer {served.token}"}, open_timeout=30) as ws:
        assert "permessage-deflate" in ws.request.headers[EXTENSIONS]  # websockets' default offer
        assert ws.response.headers.get(EXTENSIONS) is None
        assert ws.protocol.extensions == []
        assert '"kind":"hello"' in ws.recv(timeout=30)
