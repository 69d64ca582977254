"""The concepts' part of the remote engine (`RemoteWorker`): the concept jobs' requests in their lanes, what their
answers and failures are said with (the in-process jobs' records, `worker.concepts`), and `RemoteConceptJobs`, the
concept jobs' face on a remote engine:

    concepts   (the concept jobs' face, `RemoteConceptJobs`: open a dictionary folder in the server's data root,
               read an image's concepts, a concept's relevance map, its page) result -> sigConceptAnswer(kind,
               run id, OpenedConcepts | ConceptsRead | ConceptMap | ConceptPagePicture), the worker's records;
               a read with a concept picked asks for that concept's map next, as in process
    learn      (a concepts build over a folder in the data root) progress (by stage) -> the phase and
               sigConceptProgress, as in process; result -> sigConceptAnswer("build", 0, the folder); cancelled or
               failed -> sigConceptAnswer("build", 0, Failure) (a cancelled build resumes when built again)
"""

from __future__ import annotations

from dataclasses import replace

from inspector.core.records import concepts as concept_records
from inspector.core.records.failure import Failure

from .side_jobs import RemoteJobFace

#: The concept jobs' lanes (`worker_concepts.LANES`, and a concept's page), after the worker's.
CONCEPT_LANES = ("concepts-open", "concepts-build", "concepts-read", "concepts-map", "concepts-page")
#: The worker's record of each concept answer, by the protocol's name (`worker_concepts`: the same fields).
CONCEPT_ANSWERS = ("OpenedConcepts", "ConceptsRead", "ConceptMap")


def as_record(cls, value):
    """`value` as a `cls` of the same fields (the worker's record and the protocol's one; itself when it is one)."""
    import dataclasses

    if type(value) is cls:
        return value
    return cls(**{f.name: getattr(value, f.name) for f in dataclasses.fields(cls) if f.init})


def concept_kind(request) -> str:
    return "build" if hasattr(request, "data_dir") else request.kind


def run_id_of(flight) -> int:
    """The app's run id a request in flight answers to (0 where it has none)."""
    if flight.lane == "finish":
        return flight.request[0].run_id
    return getattr(flight.request, "run_id", 0) or 0


class RemoteConcepts:
    """Mixed into RemoteWorker (which has `_put`, `_lanes`, `_lock`, `_flights`, `_cancels`, `_wake` and the
    signals `_sigConceptAnswer`, `_sigConceptProgress`)."""

    def request_concepts(self, request) -> str:
        """A concept job (`worker_concepts.ConceptsRequest` or `BuildConceptsRequest`), in its kind's lane (latest
        wins); its answer is sigConceptAnswer(kind, run id, ...)."""
        kind = concept_kind(request)
        record = as_record(concept_records.BuildConceptsRequest if kind == "build" else
                           concept_records.ConceptsRequest, request)
        return self._put(f"concepts-{kind}", record)

    def cancel_concepts_build(self) -> None:
        """Stop a concepts build: one waiting is dropped (answered cancelled), one on the engine is stopped after
        its batch (its state is kept there: building again resumes)."""
        dropped = self._lanes.drop("concepts-build")
        if dropped is not None:
            self._sigConceptAnswer.emit("build", 0, Failure("Cancelled.", "concepts", "RunCancelled", 0, True))
            return
        with self._lock:
            keys = [f.key for f in self._flights.values() if f.lane == "concepts-build"]
            self._cancels.extend(keys)
        self._wake.set()

    def _concept_failed(self, lane: str, request, failed: Failure) -> None:
        """What a concept job that came to nothing is answered with: a map its ConceptMap without a map, the rest
        the Failure (as the in-process jobs answer)."""
        kind = lane[len("concepts-"):]
        if kind == "map":
            from .concepts import ConceptMap

            concept = request.concept if request.concept is not None else -1
            self._sigConceptAnswer.emit("map", request.run_id, ConceptMap(request.run_id, concept, request.target,
                                                                          None, failed.message))
            return
        self._sigConceptAnswer.emit(kind, 0 if kind == "build" else request.run_id, failed)

    def _on_concept_event(self, flight, kind: str, body) -> None:
        from . import concepts as worker_concepts

        lane, request = flight.lane, flight.request
        if kind == "failure":
            self._concept_failed(lane, request, body)
        elif kind == "cancelled":
            self._concept_failed(lane, request, Failure(str(body) or "Cancelled.", "concepts", "RunCancelled",
                                                        run_id_of(flight), True))
        elif kind != "result":  # an error: the engine could not read the request
            self._concept_failed(lane, request, Failure(f"The engine could not take the request: {body}",
                                                        "concepts", "EngineError", run_id_of(flight)))
        elif lane == "concepts-build":
            self._sigConceptAnswer.emit("build", 0, body)
        else:
            name = type(body).__name__
            answer = as_record(getattr(worker_concepts, name), body) if name in CONCEPT_ANSWERS else body
            self._sigConceptAnswer.emit(lane[len("concepts-"):], request.run_id, answer)
            if lane == "concepts-read" and name == "ConceptsRead" and request.concept is not None \
                    and body.target is not None and not self._lanes.waiting("concepts-map"):
                self._put("concepts-map", replace(request, kind="map", target=body.target))  # as in process


class RemoteConceptJobs(RemoteJobFace):
    """The concept jobs' face (`worker_concepts.ConceptJobs`) on a remote engine: each request in its kind's lane
    (latest wins), the answers the worker's records; `cancel` stops a build after its batch (its state is kept on
    the engine: building again resumes)."""

    def __init__(self, worker) -> None:
        super().__init__(worker.sigConceptAnswer, worker.sigConceptProgress, worker.request_concepts,
                         worker.cancel_concepts_build)
