"""The Concepts view's work, on the worker's thread (`ConceptJobs`, moved there, beside the Worker that owns the
model): opening a dictionary folder, reading an image's concepts and the input map of one concept's relevance (the
reads a server makes too: `inspector.core.concepts.reading`), and learning a dictionary (`learn_concepts`, with
progress; cancelled between batches, resumed by building again). It runs between the worker's own jobs, never
beside them: the loaded model is used by one thread at a time. Plain records go back: OpenedConcepts, ConceptsRead,
ConceptMap, a Failure; the requests and the answers are `inspector.core.records.concepts`' (a remote engine's too),
named here as well."""

from __future__ import annotations

from PySide6.QtCore import Signal

from inspector.core.records.concepts import (BuildConceptsRequest, ConceptMap, ConceptsRead, ConceptsRequest,
                                             OpenedConcepts)
from inspector.core.records.failure import failure
from inspector.core.records.requests import ModelRequest

from ..common.progress_rate import rate_reporter
from .side_jobs import SideJobs

#: The concept jobs' lanes, in the order they are served: one request waits in each (latest wins).
LANES = ("open", "build", "read", "map")
STAGES = {"pass": ("Concepts: the layer over the images", "images"), "fit": ("Concepts: fitting", "batches"),
          "measure": ("Concepts: measuring the fit", "images")}

__all__ = ["BuildConceptsRequest", "ConceptJobs", "ConceptMap", "ConceptsRead", "ConceptsRequest", "OpenedConcepts",
           "build_progress"]


class ConceptJobs(SideJobs):
    """Lives on the worker's thread (`thread`); `worker` is the Worker there (its `bench` holds the model).
    Latest wins for each kind of request; a build runs alone and is stopped by `cancel()`.

    Signals
    -------
    sigAnswer(str, int, object): what one request came to (the protocol's `result` event): its kind, the run id it
        was asked with (0: none), and
          "open": an OpenedConcepts, or a Failure (what "concepts"),
          "read": a ConceptsRead, or a Failure,
          "map": a ConceptMap,
          "build": the folder the build finished (open it next), or a Failure (cancelled: the build stopped and
            resumes when started again).
    sigProgress(int, int): done and total of the build's current stage.
    """

    _sigAnswer = Signal(str, int, object)
    _sigProgress = Signal(int, int)
    def __init__(self, worker, thread) -> None:
        super().__init__(worker, thread, LANES)
        self._reader = None  # the ConceptReader (core.concepts.reading), made on the worker's thread

    # -- called from the GUI thread ----------------------------------------------------------
    def request(self, request) -> str:
        """Wait `request` in its kind's lane (replacing the one waiting there); its id."""
        kind = "build" if isinstance(request, BuildConceptsRequest) else request.kind
        if kind == "build":
            self._cancel.clear()
        return self._put(kind, f"concepts-{kind}", request)

    # -- on the worker's thread ----------------------------------------------------------------
    def _do(self, kind: str, request) -> None:
        getattr(self, f"_{kind}")(request)

    def _loaded(self, model: ModelRequest):
        bench = self.worker.bench
        return bench.loaded if bench.holds(model) else None

    @property
    def reader(self):
        """The reads the server makes too (`core.concepts.reading`): dictionaries kept while their file stays."""
        if self._reader is None:
            from inspector.core.concepts.reading import ConceptReader

            self._reader = ConceptReader()
        return self._reader

    def _open(self, request: ConceptsRequest) -> None:
        self.worker._sigPhase.emit("Opening the concepts")
        try:
            opened = self.reader.open(request, self.worker.bench)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a message
            self._sigAnswer.emit("open", request.run_id, failure(exc, "concepts", request.run_id))
            return
        self._sigAnswer.emit("open", request.run_id, opened)

    def _read(self, request: ConceptsRequest) -> None:
        try:
            self.worker._sigPhase.emit("Concepts of the image")
            read = self.reader.read(request, self.worker.bench)  # another model loaded meanwhile: a cancelled
            # Failure (the view asks again with its next result)
        except Exception as exc:  # noqa: BLE001
            self._sigAnswer.emit("read", request.run_id, failure(exc, "concepts", request.run_id))
            return
        self._sigAnswer.emit("read", request.run_id, read)
        if isinstance(read, ConceptsRead) and request.concept is not None and read.target is not None:
            self._map(request, read.target)

    def _map(self, request: ConceptsRequest, target: int | None = None) -> None:
        target = request.target if target is None else target
        if self._loaded(request.model) is None or target is None:
            return  # (a model loaded meanwhile: its own reading asks again)
        self.worker._sigPhase.emit(f"Concept {request.concept}'s relevance map")
        self._sigAnswer.emit("map", request.run_id, self.reader.map(request, self.worker.bench, target))

    def _build(self, request: BuildConceptsRequest) -> None:
        from inspector.core.concepts import learn_concepts

        bench = self.worker.bench
        try:
            loaded, _tree = bench.load(request.model)
            try:
                learn_concepts(loaded, request.data_dir, request.layer, request.out_dir, method=request.method,
                               k=request.k, sparsity=request.sparsity, device=request.device, progress=build_progress(
                                   self.worker._sigPhase.emit, self._sigProgress.emit), cancel=self._cancel.is_set)
            finally:
                bench.move_to(request.device)  # the model stays where the app runs it
        except Exception as exc:  # noqa: BLE001 - RunCancelled and every failure become a message
            self._sigAnswer.emit("build", 0, failure(exc, "concepts"))
            return
        self._sigAnswer.emit("build", 0, request.out_dir)


def build_progress(say, tell):
    """learn_concepts' progress(stage, done, total) said as "Concepts: fitting: 3 of 20 batches (1.5/s, 11 s left;
    Esc cancels)" with `say`, and `tell(done, total)`; each stage counted from its first report (a resumed build:
    only what this run did)."""
    reporters: dict[str, object] = {}

    def progress(stage: str, done: int, total: int) -> None:
        if stage not in reporters:
            what, unit = STAGES.get(stage, (f"Concepts: {stage}", "steps"))
            reporters.clear()
            reporters[stage] = rate_reporter(what, unit, say, tell, from_first_report=True)
        reporters[stage](done, total)

    return progress
