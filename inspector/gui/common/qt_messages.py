"""Qt's messages, minus what is not the user's business: the offscreen platform's "This plugin does not
support propagateSizeHints()" (printed on every window shown under the self-test and the screenshots)
carries nothing a user can act on. Every other message goes to stderr as Qt would print it."""

from __future__ import annotations

import sys

from PySide6.QtCore import qInstallMessageHandler

#: Parts of Qt messages that are dropped.
NOISE = ("does not support propagateSizeHints",)
_installed = False


def quiet_qt() -> None:
    """Install the filter once per process (before or after the QApplication is made)."""
    global _installed
    if not _installed:
        qInstallMessageHandler(_handler)
        _installed = True


def _handler(_kind, _context, message: str) -> None:
    if any(part in message for part in NOISE):
        return
    print(message, file=sys.stderr)
