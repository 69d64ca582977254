"""What each lane of the remote engine is on the server (`RemoteWorker`'s tables): the request kind it is served
with and the Failure's `what`, what the status bar says while it is there, which lanes share one server lane, and
a request in flight (`Flight`) with the StatsUpdate and Failure its events come to."""

from __future__ import annotations

from inspector.core.records.failure import Failure

from .local import LANES
from .remote_concepts import CONCEPT_LANES, run_id_of
from .remote_files import FILE_KINDS, FILE_LANES
from .remote_trust import EVALUATION_LANE

REMOTE_LANES = LANES + CONCEPT_LANES + FILE_LANES + (EVALUATION_LANE,)
#: A lane -> the request kind the server serves it with, and the Failure's `what`.
SERVED = {"catalogue": ("catalogue", "engine"), "model": ("load", "load"), "run": ("run", "run"),
          "finish": ("run", "statistics"), "attribution": ("attribute", "attribution"), "atlas": ("atlas", "atlas"),
          "pictures": ("atlas", "atlas"), "graph": ("graph", "graph"), "values": ("values", "graph values"),
          **{lane: ("concepts", "concepts") for lane in CONCEPT_LANES}, "concepts-build": ("learn", "concepts"),
          **{lane: (FILE_KINDS[lane], "files") for lane in FILE_LANES}, "check": ("checks", "checks"),
          EVALUATION_LANE: ("evaluate", "evaluation")}
#: Lanes whose every answer, a failure too, is sigAnswer(lane, run id, ...) (as the in-process worker's).
ANSWERED = ("graph", "values", *FILE_LANES)
#: Client lanes the server serves in one lane of its own (a request waiting there is replaced by the next): one of
#: a group in flight at a time, so none is replaced. (The folder jobs: the server's "job" lane.)
GROUPS = {"atlas": "job", "pictures": "job", "concepts-build": "job", "concepts-open": "concepts",
          "concepts-read": "concepts", "concepts-map": "concepts", "concepts-page": "concepts", EVALUATION_LANE: "job"}


def stats_update(outcome):
    """The StatsUpdate that fills `outcome` as run (the partial) with the final outcome's statistics."""
    from inspector.core.workbench import StatsUpdate

    def stats(result):
        return {name: c.stats for name, c in result.captures.items() if c.stats is not None}

    baseline = outcome.baseline
    return StatsUpdate(outcome.run_id, stats(outcome.result),
                       stats(baseline) if baseline is not None and baseline is not outcome.result else {},
                       outcome.analysis)


class Flight:
    """One request sent to the server: its lane, the app's id for it, the request, and what came so far."""

    def __init__(self, lane: str, key: str, request) -> None:
        self.lane, self.key, self.request = lane, key, request
        self.partial = None  # a run's outcome as run, once it came
        self.stopping = False  # a cancel was sent for it
        self.progress = None  # a concepts build's: says each stage's progress as in process


#: What the status bar says while a lane's request is on the engine (None: its own progress says it, or nothing).
PHASES = {
    "model": lambda r: f"Loading {r[0].source} on the engine",
    "finish": lambda r: "Statistics of the other layers (on the engine)",
    "run": lambda r: "Running on the engine",
    "graph": lambda r: "Recording the graph on the engine",
    "values": lambda r: "Working out the graph's values on the engine",
    "catalogue": lambda r: "Listing the engine's torchvision and timm models",
    "concepts-build": lambda r: None,  # its own phases come with its progress ("Concepts: ...")
    "concepts-open": lambda r: "Opening the concepts (on the engine)",
    "concepts-read": lambda r: "Concepts of the image (on the engine)",
    "concepts-page": lambda r: f"Concept {r.concept}'s page (on the engine)",
    "concepts-map": lambda r: f"Concept {r.concept}'s relevance map (on the engine)",
    "atlas": lambda r: _atlas_phase(r),
    "pictures": lambda r: _atlas_phase(r),
    "attribution": lambda r: f"Attribution ({r.method}) on the engine",
    "check": lambda r: f"Checking the maps ({r.method}) on the engine",
    EVALUATION_LANE: lambda r: "Evaluation: starting (on the engine)",
    **{lane: lambda r: None for lane in FILE_LANES},  # a listing or a summary is answered at once
}


def _atlas_phase(request) -> str | None:
    if request.kind == "pictures":
        return None
    return ("Opening the atlas" if request.kind == "open" else "Atlas: building") + " (on the engine)"


def failure_of(flight: Flight, kind: str, body) -> Failure:
    """The Failure a request's last event other than its result comes to (the engine's own, when it sent one)."""
    what = SERVED[flight.lane][1]
    if kind == "failure":
        return body
    if kind == "cancelled":
        return Failure(str(body) or "Cancelled.", what, "RunCancelled", run_id_of(flight), True)
    return Failure(f"The engine could not take the request: {body}", what, "EngineError", run_id_of(flight))
