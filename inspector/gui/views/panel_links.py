"""What the Layer tab's two panels share: a channel enlarged on one side is enlarged on the other, and the
cursor is read out there, only where both show one tensor and its gradient (`Key.same_tensor`); otherwise the
other side says what it shows instead."""

from __future__ import annotations

from inspector.core.common.errors import SpecError
from inspector.core.common.keys import parse_key


def linked(one: str, other: str) -> bool:
    """Two panels' keys capture one tensor and its gradient."""
    try:
        return bool(one and other) and parse_key(one).same_tensor(parse_key(other))
    except SpecError:
        return False


def follow_zoom(source, other, channel: int) -> None:
    """`channel` enlarged on `source`: enlarged on `other` too where linked, else `other` says why not."""
    if linked(source.key, other.key):
        other.zoom_channel(channel)
    elif other.key:
        other.hover.setText(f"Not linked: {other.key} is another tensor than {source.key}.")  # fits at 1280


def link_panels(activation, gradient) -> None:
    for one, other in ((activation, gradient), (gradient, activation)):
        one.sigChannelZoomed.connect(lambda c, one=one, other=other: follow_zoom(one, other, c))
        one.sigCursor.connect(lambda where, one=one, other=other: other.show_cursor(
            where if where is None or linked(one.key, other.key) else None))
