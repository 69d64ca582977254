"""What the app asks the worker for when "Check these maps" is pressed: one map's trust card
(inspector.core.attribution.sanity.card), as a plain record."""

from __future__ import annotations

from dataclasses import dataclass, field

from .protocols import DEFAULT_PROTOCOL
from .requests import ModelRequest

THRESHOLD = 0.5  # MPRT's Spearman(|map|) threshold (sanity.randomisation.THRESHOLD, kept torch-free here)


@dataclass(frozen=True)
class TrustRequest:
    """The trust card of `method`'s map of `input` (its `target`, `layer` and `options` as an AttributionRequest
    carries them) under `protocol`, every draw from `seed` (None: one is drawn and shown). `original`: the map
    already made (an Attribution, in process only): the card makes it again when None."""

    model: ModelRequest = field(default_factory=ModelRequest)
    input: str = ""
    device: str = "cpu"
    method: str = "gradcam"
    target: str = ""
    layer: str | None = None
    run_id: int = 0
    options: tuple[tuple[str, object], ...] = ()
    protocol: str = DEFAULT_PROTOCOL
    seed: int | None = None
    threshold: float = THRESHOLD
    original: object = None
