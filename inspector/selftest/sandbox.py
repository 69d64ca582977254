"""The self-test's sandbox: a new non-ASCII temporary working folder, an empty TORCH_HOME,
offscreen Qt, and Python's network refused. Imports neither torch nor Qt."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
from pathlib import Path
from typing import Iterator

from .base import NON_ASCII_PREFIX, OFFLINE_MESSAGE, Context


@contextlib.contextmanager
def offline() -> Iterator[None]:
    """Refuse every internet connection made through Python's socket module."""
    saved = (socket.socket.connect, socket.socket.connect_ex, socket.create_connection, socket.getaddrinfo)
    inet = {socket.AF_INET, getattr(socket, "AF_INET6", socket.AF_INET)}

    def refuse(*_args, **_kwargs):
        raise OSError(OFFLINE_MESSAGE)

    def connect(sock, address):
        if sock.family in inet:
            refuse()
        return saved[0](sock, address)

    def connect_ex(sock, address):
        if sock.family in inet:
            refuse()
        return saved[1](sock, address)

    socket.socket.connect, socket.socket.connect_ex = connect, connect_ex
    socket.create_connection, socket.getaddrinfo = refuse, refuse
    try:
        yield
    finally:
        (socket.socket.connect, socket.socket.connect_ex, socket.create_connection, socket.getaddrinfo) = saved


@contextlib.contextmanager
def sandbox(keep: bool = False) -> Iterator[Context]:
    """A new non-ASCII temporary folder as the working folder, an empty TORCH_HOME, offscreen Qt, offline."""
    root = Path(tempfile.mkdtemp(prefix=NON_ASCII_PREFIX)).resolve()
    torch_home = root / "torch-home"
    torch_home.mkdir()
    qpa = os.environ.get("QT_QPA_PLATFORM", "")  # an offscreen platform already chosen keeps its options
    env = {"QT_QPA_PLATFORM": qpa if qpa.startswith("offscreen") else "offscreen", "TORCH_HOME": str(torch_home), "HF_HUB_OFFLINE": "1",
           "TMPDIR": str(root), "TEMP": str(root), "TMP": str(root)}
    saved_env = {k: os.environ.get(k) for k in env}
    saved_cwd, saved_tempdir = os.getcwd(), tempfile.tempdir
    os.environ.update(env)
    tempfile.tempdir = str(root)
    os.chdir(root)
    try:
        with offline():
            yield Context(root, torch_home)
    finally:
        os.chdir(saved_cwd)
        tempfile.tempdir = saved_tempdir
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        if keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
