"""`network-inspector --engine URL [--token-file FILE]` opens the app on a remote engine; what cannot be used is said
in one line before any window opens (the window's own tests: tests/gui/test_remote_engine_window.py)."""

from __future__ import annotations

import pytest

from inspector.cli.dispatch import main


@pytest.mark.parametrize(("args", "said"), [
    (["--token-file", "token"], "error: --token-file names the token of a remote engine: give --engine URL too."),
    (["--engine", "http://127.0.0.1:8765"],
     "error: --engine takes ws://HOST:PORT or wss://HOST:PORT, not 'http://127.0.0.1:8765'."),
    (["--engine", "ws://127.0.0.1:8765", "--token-file", "no-such-token"],
     "error: --token-file no-such-token: no such file."),
    (["--engine", "ws://127.0.0.1:8765", "samples"],
     ("error: --engine and --token-file before a command open the app on that engine; a command that runs on one "
      "takes its own after its name (capture --engine URL).")),
])
def test_what_the_app_cannot_take_is_one_line(args, said, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    assert capsys.readouterr().err.strip() == said


def test_the_app_is_launched_on_the_engine(monkeypatch):
    launched = []
    monkeypatch.setattr("inspector.gui.app.run_app", lambda **kw: launched.append(kw) or 0)
    assert main(["--engine", "wss://gpu.example:8765"]) == 0
    assert launched == [{"engine": "wss://gpu.example:8765", "token_file": None}]
