"""A Qt picture encoded in memory, so that it goes to disk through the one writer
(`inspector.core.storage.writes`: whole or not at all)."""

from __future__ import annotations

from PySide6.QtCore import QBuffer, QByteArray, QIODevice


def encoded(picture, fmt: str = "PNG") -> bytes | None:
    """`picture` (a QImage or QPixmap) as the bytes of a `fmt` file; None when Qt cannot write that format."""
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.WriteOnly)
    ok = picture.save(buffer, fmt)
    buffer.close()
    return bytes(data.data()) if ok else None
