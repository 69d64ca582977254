"""What the atlas's arguments are, checked without the model: K and the batch size, and the Ray cluster's
address. Torch-free and outside the atlas package (whose `__init__` imports torch), so that the CLI says a
wrong one before torch is imported and the model loads; `job_of` and `run_atlas` check them by these rules."""

from __future__ import annotations

from ..common.errors import AtlasError, SpecError

#: The most images a channel (or a concept) keeps: each of them is held in memory per channel and cropped into
#: a thumbnail of its own, and a channel's page shows them all
TOP_MOST = 100


def check_counts(top, batch) -> None:
    """SpecError unless K (`top`) is a whole number from 1 to TOP_MOST and the batch size one of at least 1."""
    for name, value in (("--top", top), ("--batch", batch)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise SpecError(f"{name} must be a whole number, not {value!r}.")
    if top < 1 or batch < 1:
        raise SpecError(f"--top and --batch must be at least 1 (got top {top}, batch {batch}).")
    check_top(top)


def check_top(top: int) -> None:
    """SpecError past TOP_MOST, saying why."""
    if top > TOP_MOST:
        raise SpecError(f"--top {top} is more than {TOP_MOST}, the most images kept per channel (each one is kept in "
                        f"memory for every channel and cropped into a thumbnail of its own).")


#: The HTTP/2 client preface and an empty SETTINGS frame: what a gRPC client (Ray's driver) sends first.
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


def check_address(address: str, timeout_s: float = 5.0) -> None:
    """AtlasError unless a Ray cluster's head answers at `address` (`HOST[:PORT]`, the GCS port 6379 by
    default; `auto` is Ray's to find). Ray itself retries an address where nothing listens for minutes,
    and waits past 150 s on a port where something else answers: the head's GCS is a gRPC (HTTP/2)
    server, so it must answer the HTTP/2 preface with a SETTINGS frame within `timeout_s`.
    `ray://` (Ray Client) is refused: it needs ray[client], which the ray extra does not install."""
    import socket
    from urllib.parse import urlsplit

    if address in ("auto", "local"):
        return
    how = "write HOST:PORT of the cluster's head (e.g. 10.0.0.5:6379, as `ray start --head` prints it) or auto"
    if address.startswith("ray://"):
        raise AtlasError(f"{address}: Ray Client addresses (ray://) are not supported (they need ray[client], "
                         f"which this install lacks); {how}.")
    shown = repr(address) if len(repr(address)) <= 80 else repr(address)[:77] + "..."
    unreadable = AtlasError(f"Cannot read the Ray address {shown}: {how}.")
    try:
        parts = urlsplit(address if "://" in address else f"//{address}")
        host, port = parts.hostname, parts.port or 6379
        if host and not host.isascii():
            host.encode("idna")  # a name no host can have (a label past 63 characters) fails here
    except (ValueError, UnicodeError):
        raise unreadable from None
    labels = (host or "").rstrip(".").split(".")
    if not host or parts.scheme or len(host) > 253 or not all(0 < len(label) <= 63 for label in labels) \
            or not all(c.isalnum() or c in "-._:" for c in host):
        raise unreadable
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as conn:
            conn.settimeout(timeout_s)
            conn.sendall(_H2_PREFACE)
            frame = _read(conn, 9)
    except OSError as exc:
        if isinstance(exc, TimeoutError) or isinstance(exc, socket.timeout):
            raise AtlasError(f"{host}:{port} took the connection but did not answer as a Ray cluster's head within "
                             f"{timeout_s:g} s; {how}.") from None
        raise AtlasError(f"Nothing answers at {host}:{port} ({exc.strerror or exc}): is the cluster's head "
                         f"running there (`ray start --head` prints its address)?") from None
    if len(frame) < 9 or frame[3] != 0x04:  # not an HTTP/2 SETTINGS frame: not a gRPC server
        raise AtlasError(f"Something at {host}:{port} answers, but not as a Ray cluster's head (its GCS speaks "
                         f"gRPC); {how}.")


def _read(conn, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = conn.recv(count - len(data))
        if not chunk:
            break
        data += chunk
    return data
