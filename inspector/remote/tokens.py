"""The server's token: 256 random bits made on first start, kept in a file only its owner can read, asked of
every client as `Authorization: Bearer TOKEN` on the upgrade request (never in the address: URLs end up in logs).

The file is `$XDG_CONFIG_HOME/network-inspector/token` (`~/.config/...` without it) unless `--token-file` names
another. A client finds the token given to it, else `NETWORK_INSPECTOR_TOKEN`, else that file.
"""

from __future__ import annotations

import hmac
import os
import secrets
import stat
from pathlib import Path

from .errors import ServerSetupError

ENV = "NETWORK_INSPECTOR_TOKEN"
MIN_LENGTH = 32  # a token shorter than this (about 190 bits in base64) is refused


def default_token_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "network-inspector" / "token"


def server_token(path: str | os.PathLike | None = None) -> tuple[str, Path]:
    """The token in `path` (the default file without it), made there with 0600 permissions when it is not
    there yet; ServerSetupError when others may read it or it holds no usable token."""
    file = Path(path).expanduser() if path else default_token_file()
    if not file.exists():
        file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        token = secrets.token_urlsafe(32)
        try:
            fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # made meanwhile by another server: read that one
            return read_token_file(file), file
        except OSError as exc:
            raise ServerSetupError(f"Cannot write the token file {file}: {exc.strerror or exc}.") from None
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(token + "\n")
        return token, file
    return read_token_file(file), file


def read_token_file(file: Path) -> str:
    """The token in `file`, refused when it is readable by others or too short to be a token."""
    try:
        mode = file.stat().st_mode
        text = file.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ServerSetupError(f"Cannot read the token file {file}: {getattr(exc, 'strerror', None) or exc}.") \
            from None
    if os.name == "posix" and mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ServerSetupError(f"The token file {file} can be read by others (mode {stat.S_IMODE(mode):o}): "
                               f"chmod 600 {file}.")
    if len(text) < MIN_LENGTH or any(c.isspace() for c in text):
        raise ServerSetupError(f"The token file {file} holds no token of at least {MIN_LENGTH} characters: "
                               f"remove it and a new one is made.")
    return text


def client_token(token: str | None = None, path: str | os.PathLike | None = None) -> str:
    """The token a client sends: `token` given, else $NETWORK_INSPECTOR_TOKEN, else the token file."""
    if token:
        return token
    if os.environ.get(ENV):
        return os.environ[ENV].strip()
    file = Path(path).expanduser() if path else default_token_file()
    try:
        return file.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        raise ServerSetupError(f"No token: pass one, set {ENV}, or copy the server's token file to {file}.") \
            from None


def bearer_matches(header: str | None, token: str) -> bool:
    """`Authorization: Bearer TOKEN` with the server's token (compared in constant time)."""
    if not header or not header.startswith("Bearer "):
        return False
    return hmac.compare_digest(header[len("Bearer "):].strip().encode(), token.encode())
