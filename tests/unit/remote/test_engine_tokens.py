"""Issue 53: the server's token: made once with 0600 permissions, refused when others can read it or it is too
short; what a client sends: the token given, else NETWORK_INSPECTOR_TOKEN, else the token file; the header
compared whole."""

from __future__ import annotations

import os
import stat

import pytest

from inspector.remote.errors import ServerSetupError
from inspector.remote.tokens import bearer_matches, client_token, default_token_file, server_token


def test_the_token_is_made_once_readable_by_its_owner_only(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    token, file = server_token()
    assert file == default_token_file() == tmp_path / "config" / "network-inspector" / "token"
    assert len(token) == 43 and stat.S_IMODE(file.stat().st_mode) == 0o600
    assert server_token() == (token, file)
    assert server_token(tmp_path / "other")[0] != token


def test_a_token_file_others_can_read_or_without_a_token_is_refused_in_one_line(tmp_path):
    file = tmp_path / "token"
    file.write_text("t" * 43)
    os.chmod(file, 0o644)
    with pytest.raises(ServerSetupError, match="can be read by others") as refused:
        server_token(file)
    assert "\n" not in str(refused.value)
    os.chmod(file, 0o600)
    assert server_token(file)[0] == "t" * 43
    file.write_text("short")
    with pytest.raises(ServerSetupError, match="no token of at least 32"):
        server_token(file)


def test_a_client_sends_the_token_given_else_the_environments_else_the_files(tmp_path, monkeypatch):
    file = tmp_path / "token"
    file.write_text("from-file\n")
    monkeypatch.delenv("NETWORK_INSPECTOR_TOKEN", raising=False)
    assert client_token(path=file) == "from-file"
    monkeypatch.setenv("NETWORK_INSPECTOR_TOKEN", "from-env")
    assert client_token(path=file) == "from-env"
    assert client_token("given", file) == "given"
    monkeypatch.delenv("NETWORK_INSPECTOR_TOKEN")
    with pytest.raises(ServerSetupError, match="No token"):
        client_token(path=tmp_path / "none")


def test_only_the_whole_bearer_token_matches():
    token = "a" * 43
    assert bearer_matches(f"Bearer {token}", token)
    for header in (None, "", token, f"Bearer {token[:-1]}", f"Bearer {token}a", f"Basic {token}", "Bearer "):
        assert not bearer_matches(header, token), header
