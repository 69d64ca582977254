"""How one server is set up, checked before it starts: a loopback address unless it speaks TLS, the token, the
data root, trust, the default device, the limits (and a Ray address, kept for the atlas and concept builds)."""

from __future__ import annotations

import ipaddress
import ssl
from dataclasses import dataclass, field
from pathlib import Path

from .data_root import DataRoot
from .errors import ServerSetupError
from .limits import Limits


@dataclass(frozen=True)
class ServerConfig:
    token: str
    token_file: Path
    root: DataRoot
    host: str = "127.0.0.1"
    port: int = 8765
    trusted: bool = False
    device: str = "cpu"
    limits: Limits = field(default_factory=Limits)
    tls_cert: str | None = None
    tls_key: str | None = None
    root_is_default: bool = False  # no --data-root: the folder the server was started in
    ray: str | None = None  # the Ray cluster atlas builds run on (None: this machine)

    def __post_init__(self) -> None:
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ServerSetupError("TLS needs both --tls-cert and --tls-key.")
        if self.tls_cert is None and not is_loopback(self.host):
            raise ServerSetupError(f"--host {self.host} is not a loopback address: serving on it needs --tls-cert and "
                                   f"--tls-key (wss://), or keep 127.0.0.1 and reach it through an ssh tunnel "
                                   f"(ssh -L 8765:127.0.0.1:8765 HOST).")
        if not 0 <= self.port <= 65535:
            raise ServerSetupError(f"--port is 0 (any free port) to 65535, not {self.port}.")
        limits = self.limits
        if limits.max_message < 1024 or limits.rate <= 0 or limits.max_connections < 1:
            raise ServerSetupError("The limits are a message of at least 1 KiB, a rate above 0 and at least one "
                                   "connection.")

    @property
    def scheme(self) -> str:
        return "ws" if self.tls_cert is None else "wss"

    def ssl_context(self) -> ssl.SSLContext | None:
        if self.tls_cert is None:
            return None
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        try:
            context.load_cert_chain(self.tls_cert, self.tls_key)
        except (OSError, ssl.SSLError) as exc:
            raise ServerSetupError(f"Cannot read the TLS certificate {self.tls_cert} and key {self.tls_key}: "
                                   f"{getattr(exc, 'strerror', None) or exc}.") from None
        return context


def is_loopback(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
