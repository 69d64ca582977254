"""Cancelling a weights download (Esc in the app) leaves nothing behind in the cache."""

from __future__ import annotations

import io
import urllib.request
from types import SimpleNamespace

import pytest

from inspector.core.common.errors import RunCancelled
from inspector.core.sources import pretrained


class _Response(io.BytesIO):
    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.headers = {"Content-Length": str(len(data))}


def test_a_cancelled_download_leaves_no_file(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    data = bytes(range(256)) * (3 * 4096 + 7)  # 3 MiB + 1792 bytes: four 1 MiB chunks
    monkeypatch.setattr(urllib.request, "urlopen", lambda url, timeout=None: _Response(data))
    weights = SimpleNamespace(url="https://example.invalid/weights/net-0123.pth")
    seen = []

    def progress(done: int, total: int) -> None:
        seen.append((done, total))
        if len(seen) == 2:
            raise RunCancelled("Download cancelled.")

    with pytest.raises(RunCancelled):
        pretrained.ensure_cached(weights, progress)
    assert seen == [(1 << 20, len(data)), (2 << 20, len(data))]
    folder = tmp_path / "hub" / "checkpoints"
    assert list(folder.iterdir()) == []  # neither the file nor a .part is left

    seen.clear()
    path = pretrained.ensure_cached(weights, lambda done, total: seen.append(done))
    assert path.read_bytes() == data and seen[-1] == len(data) and len(seen) == 4
