"""Check these maps and Evaluate… on the server's engine thread, over the Workbench that holds the model: the app's
own worker's work (`core.attribution.sanity.served`, `core.evaluate.served`), so a card or an evaluation folder is
the same wherever it is made.

    checks    TrustRequest       -> TrustCard, the phases it goes through said as progress (their words the stage);
                                    the randomisation strip's maps only when the request asks for them (`maps`)
    evaluate  EvaluationRequest  -> EvaluationDone, over an image folder in the data root into a folder there
                                    (progress in images; cancelled between images, its state kept: the same request
                                    resumes it)
"""

from __future__ import annotations

import re
import time
from dataclasses import replace

from inspector.protocol.messages import Message

PHASES_EVERY_S = 0.1


class Phases:
    """`progress` events of a job that says what it does in words (a trust card: "MPRT step 3 of 9"): the words as
    the stage, done and total 0 (the words count). At most ten a second, but a phase of another kind (its words
    without their numbers differ: MPRT after ROAD) always goes, so each step of the card is said."""

    def __init__(self, key: str, send) -> None:
        self.key, self.send = key, send
        self._last, self._kind = 0.0, None

    def __call__(self, words: str) -> None:
        now, kind = time.monotonic(), re.sub(r"\d+", "", str(words))
        if kind == self._kind and now - self._last < PHASES_EVERY_S:
            return
        self._last, self._kind = now, kind
        self.send(Message("progress", self.key, {"done": 0, "total": 0, "rate": 0.0, "stage": str(words)}))


def check_maps(bench, request, cancel, key: str, send):
    """The trust card of `request` (a TrustRequest) on the model `bench` holds; without MPRT's maps unless asked."""
    from inspector.core.attribution.sanity.served import card_on

    card = card_on(bench, request, cancel.is_set, Phases(key, send))
    if request.maps or card.mprt is None:
        return card
    return replace(card, mprt=replace(card.mprt, maps=()))


def evaluate(bench, request, cancel, progress, device: str, ray: str | None):
    """Evaluate… as `request` (an EvaluationRequest) says; the model goes back to the server's `device` after."""
    from inspector.core.evaluate.served import evaluate_on

    return evaluate_on(bench, request, progress, cancel.is_set, device, ray)
