"""Arrays as binary frames: a small JSON header (which message, which array, dtype, shape) and the raw bytes.

    4 bytes      the header's length, big-endian
    header       JSON: {"v": 1, "id": "r7", "index": 0, "dtype": "<f4", "shape": [1, 16, 64, 64]}
    body         the array's bytes, C order, little-endian

Only bool, integer and float dtypes travel (no object arrays: nothing is unpickled), and the body's length must
be what the dtype and shape say.
"""

from __future__ import annotations

import json
import math
import struct

import numpy as np

from . import VERSION
from .errors import ProtocolError

_LENGTH = struct.Struct(">I")
MAX_HEADER = 4096
MAX_DIMS = 32
DTYPES = ("|b1", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f2", "<f4", "<f8")


def pack(message_id: str, index: int, array: np.ndarray) -> bytes:
    """The frame of `array`, the `index`-th of message `message_id`."""
    if array.dtype.kind not in "biuf":
        raise ProtocolError(f"A {array.dtype} array cannot be sent: only bool, integer and float arrays travel.")
    little = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
    header = json.dumps({"v": VERSION, "id": message_id, "index": index, "dtype": little.dtype.str,
                         "shape": list(little.shape)}, separators=(",", ":")).encode()
    return b"".join((_LENGTH.pack(len(header)), header, little.data))  # the array's bytes copied once, not twice


def unpack(frame: bytes) -> tuple[str, int, np.ndarray]:
    """(message id, index, array) of a frame from `pack`; ProtocolError for anything else. The array is a
    read-only view of `frame`'s bytes."""
    if not isinstance(frame, (bytes, bytearray, memoryview)) or len(frame) < _LENGTH.size:
        raise ProtocolError("An array frame is shorter than its header's length.")
    (size,) = _LENGTH.unpack_from(frame)
    if size > MAX_HEADER or _LENGTH.size + size > len(frame):
        raise ProtocolError(f"An array frame's header says {size} bytes; the frame has {len(frame)}.")
    try:
        header = json.loads(bytes(frame[_LENGTH.size:_LENGTH.size + size]))
    except (UnicodeDecodeError, ValueError):
        raise ProtocolError("An array frame's header is not JSON.") from None
    if not isinstance(header, dict) or set(header) != {"v", "id", "index", "dtype", "shape"}:
        raise ProtocolError("An array frame's header has v, id, index, dtype and shape.")
    if header["v"] != VERSION:
        raise ProtocolError(f"An array frame of protocol version {header['v']!r}; this side speaks {VERSION}.")
    index, dtype, shape = header["index"], header["dtype"], header["shape"]
    if not isinstance(header["id"], str) or isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise ProtocolError("An array frame's id is a text and its index a whole number.")
    if dtype not in DTYPES:
        raise ProtocolError(f"An array frame's dtype is one of {', '.join(DTYPES)}, not {dtype!r}.")
    if not isinstance(shape, list) or len(shape) > MAX_DIMS or not all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape):
        raise ProtocolError(f"An array frame's shape is at most {MAX_DIMS} whole numbers, not {shape!r}.")
    kind = np.dtype(dtype)
    body = len(frame) - _LENGTH.size - size
    if math.prod(shape) * kind.itemsize != body:
        raise ProtocolError(f"An array frame of {dtype} {tuple(shape)} has {body} bytes, not "
                            f"{math.prod(shape) * kind.itemsize}.")
    array = np.frombuffer(frame, dtype=kind, offset=_LENGTH.size + size).reshape(shape)
    return header["id"], index, array
