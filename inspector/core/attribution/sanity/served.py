"""A map's trust card made by an engine that holds the model (a Workbench): the app's worker thread and a server's
engine thread both make it here, from a TrustRequest (records.trust), so a card is the same wherever it is made."""

from __future__ import annotations

from ...common.errors import RunError
from .card import TrustCard, trust_card

#: What a card asked for a model the engine no longer holds comes to.
ANOTHER_MODEL = "Another model was loaded meanwhile; press Compare all, then check its maps."


def card_on(bench, request, cancel=None, phase=None) -> TrustCard:
    """The trust card `request` asks for, on the model `bench` holds (RunError when it holds another: the maps were
    made on that one), on the request's device and input. `cancel()` True stops it (RunCancelled); `phase(words)`
    says what runs."""
    if not bench.holds(request.model):
        raise RunError(ANOTHER_MODEL)
    loaded, _tree = bench.load(request.model)
    bench.move_to(request.device)
    x = bench.input_tensor(request.input)
    return trust_card(loaded, x, request.method, request.target, request.layer, dict(request.options),
                      request.protocol, request.seed, request.threshold, request.original, cancel=cancel,
                      phase=phase)
