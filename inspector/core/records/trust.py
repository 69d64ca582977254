"""What the app asks the worker for when "Check these maps" is pressed: one map's trust card
(inspector.core.attribution.sanity.card), as a plain record."""

from __future__ import annotations

from dataclasses import dataclass

from .protocols import DEFAULT_PROTOCOL
from .requests import MapRequest

THRESHOLD = 0.5  # MPRT's Spearman(|map|) threshold (sanity.randomisation.THRESHOLD, kept torch-free here)


@dataclass(frozen=True)
class TrustRequest(MapRequest):
    """The trust card of `method`'s map of `input` (MapRequest's fields, as an AttributionRequest carries them)
    under `protocol`, every draw from `seed` (None: one is drawn and shown). `original`: the map already made (an
    Attribution): the card makes it again when None. `maps`: a remote engine sends the randomisation strip's maps
    (MPRT's map at each step) with the card; False: its numbers and curve only (the strip cannot be drawn)."""

    target: str = ""  # in MapRequest's place: the fields' order is MapRequest's
    protocol: str = DEFAULT_PROTOCOL
    seed: int | None = None
    threshold: float = THRESHOLD
    original: object = None
    maps: bool = True
