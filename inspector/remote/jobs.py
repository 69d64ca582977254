"""One request run on the server's Workbench, on the engine thread: its progress, then its result, failure or
cancellation, each sent as an event under the request's id.

    load       ModelRequest        -> ModelInfo (the model put on the server's --device)
    run        RunRequest          -> RunOutcome, every statistic worked out here, where the tensors are
                                      (with `visible`: first the outcome as run, as a `partial`); only the
                                      visible layers' arrays are sent, the whole outcome kept for `arrays`
    capture    RunRequest          -> RunResult, every array and statistic
    attribute  AttributionRequest  -> Attribution
    atlas      AtlasRequest        -> OpenedAtlas (open; build, over a folder in the data root, then open),
                                      or the TopPictures of one channel (pictures), as a list
    graph      GraphRequest        -> GraphRecorded (the graph of one forward, laid out with every top-level
                                      group closed: the client makes its own GraphLayout for the next views)
    values     GraphValuesRequest  -> GraphValues (one run) or GraphComparison (edits on vs off, against)
    concepts   ConceptsRequest     -> OpenedConcepts (open a dictionary folder in the data root), ConceptsRead
                                      (read an image's concepts), ConceptMap (one concept's relevance map),
                                      ConceptPagePicture (a concept's page as pixels)
    learn      BuildConceptsRequest -> the dictionary's folder, learned over an image folder in the data root
                                      (progress by stage; cancelled between batches, resumed by the same request)
    catalogue  (none)              -> the model sources this server offers (torchvision names, timm:NAME)
    checks     TrustRequest        -> TrustCard (a map's trust card; its phases as progress): see `trust`
    evaluate   EvaluationRequest   -> EvaluationDone (Evaluate… over a folder in the data root): see `trust`

A graph or its values is of the model the engine holds: one asked for another model (a load came between) is
refused in one line, as the app's own worker lets it go.

A run's progress counts its two stages (the run, its statistics); a download's its bytes; an attribution's its
passes; an atlas build's its images; a concepts build's the batches of its current stage (the progress says
the stage: pass, fit, measure). The engine's own errors come back as Failure records.
"""

from __future__ import annotations

import threading
import time
import traceback

from inspector.core.common.errors import InspectorError, RunCancelled
from inspector.core.records.failure import failure
from inspector.protocol import kinds
from inspector.protocol.messages import Message
from inspector.protocol.seen import seen_outcome

from .admission import admit
from .data_root import DataRoot

#: The requests the engine thread runs (`devices` and `cancel` are answered as they come).
SERVED = ("load", "run", "capture", "attribute", "atlas", "graph", "values", "concepts", "learn", "catalogue",
          "checks", "evaluate")
WHAT = {"load": "load", "run": "run", "capture": "run", "attribute": "attribution", "atlas": "atlas",
        "graph": "graph", "values": "graph values", "concepts": "concepts", "learn": "concepts",
        "catalogue": "engine", "checks": "checks", "evaluate": "evaluation"}
PROGRESS_EVERY_S = 0.1


class Progress:
    """`progress` events of one request: done, total and rate (per second), at most ten a second."""

    def __init__(self, key: str, send, cancel: threading.Event | None = None) -> None:
        self.key, self.send, self.cancel = key, send, cancel
        self.start = time.monotonic()
        self._last = 0.0

    def __call__(self, done, total) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise RunCancelled("Cancelled.")
        now = time.monotonic()
        if now - self._last < PROGRESS_EVERY_S and done != total:
            return
        self._last = now
        rate = float(done) / max(now - self.start, 1e-6)
        self.send(Message("progress", self.key, {"done": int(done), "total": int(total), "rate": rate}))


class StagedProgress:
    """`progress` events of a job that goes through stages (a concepts build: `progress(stage, done, total)`): done,
    total, rate and the stage, at most ten a second within a stage; each stage's first and last always sent. The
    rate counts from the stage's first report."""

    def __init__(self, key: str, send) -> None:
        self.key, self.send = key, send
        self._stage, self._start, self._first, self._last = None, 0.0, 0, 0.0

    def __call__(self, stage, done, total) -> None:
        now = time.monotonic()
        if stage != self._stage:
            self._stage, self._start, self._first, self._last = stage, now, int(done), 0.0
        elif now - self._last < PROGRESS_EVERY_S and done != total:
            return
        self._last = now
        rate = float(int(done) - self._first) / max(now - self._start, 1e-6)
        self.send(Message("progress", self.key, {"done": int(done), "total": int(total), "rate": rate,
                                                 "stage": str(stage)}))


class Jobs:
    def __init__(self, root: DataRoot, trusted: bool = False, device: str = "cpu", ray: str | None = None) -> None:
        from inspector.core.workbench import Workbench

        from .concepts import ServedConcepts

        self.bench = Workbench()
        self.root, self.trusted, self.device, self.ray = root, trusted, device, ray
        self.concepts = ServedConcepts(self.bench)

    def run(self, kind: str, key: str, body, cancel: threading.Event, send, keep=None,
            drawn: threading.Event | None = None) -> None:
        """Run one request and send its last event: result, failure or cancelled. `keep(outcome)`: a run's whole
        outcome, kept for its client to ask for the arrays it was not sent. `drawn`: set when a run's client has
        drawn its partial (the other statistics wait for it, at most DRAWN_WAIT_S)."""
        failed = None
        try:
            request = admit(body, self.root, self.trusted)
            if kind == "run":
                value = self._run(key, request, cancel, send, drawn=drawn)
            else:
                value = getattr(self, "_" + kind)(key, request, cancel, send)
            if kind == "run":
                if keep is not None:
                    keep(value)
                value = seen_outcome(value, request.visible)  # only what is seen crosses
        except RunCancelled as exc:
            send(Message("cancelled", key, str(exc)))
            return
        except Exception as exc:  # noqa: BLE001 - every failure becomes a message
            if not isinstance(exc, InspectorError):
                traceback.print_exc()
            failed = failure(exc, WHAT[kind], getattr(body, "run_id", 0))
        if failed is not None:
            _free_device_memory()  # outside the except block: the failed run's frames, and tensors, are gone
            send(Message("failure", key, failed))
            return
        try:
            send(Message("result", key, value))
        except InspectorError as exc:  # a value the protocol cannot carry
            send(Message("failure", key, failure(exc, WHAT[kind], getattr(body, "run_id", 0))))

    def _load(self, key, request, cancel, send):
        from inspector.core.model_info import describe

        loaded, tree = self.bench.load(request, progress=Progress(key, send, cancel))
        self.bench.move_to(self.device)
        return describe(loaded, tree, request)

    def _run(self, key, request, cancel, send, whole: bool = False, drawn: threading.Event | None = None):
        stages = Progress(key, send)
        stages(0, 2)
        outcome = self.bench.execute(request, cancel, progress=Progress(key, send, cancel))
        stages(1, 2)
        if not outcome.complete or (outcome.analyse and outcome.analysis is None):
            if request.visible is not None and not whole:
                send(Message("partial", key, seen_outcome(outcome, request.visible)))
                if drawn is not None:  # the client's decoding and drawing first (a cancel sets it too)
                    drawn.wait(kinds.DRAWN_WAIT_S)
            self.bench.finish(outcome, cancel).apply(outcome)
        stages(2, 2)
        return outcome.result if whole else outcome

    def _capture(self, key, request, cancel, send):
        return self._run(key, request, cancel, send, whole=True)

    def _attribute(self, key, request, cancel, send):
        return self.bench.attribute(request, cancel=cancel.is_set, progress=Progress(key, send))

    def _held(self, model) -> None:
        """RefusedRequest unless the engine holds the model `model` asks for (loaded by a `load`)."""
        if not self.bench.holds(model):
            from .errors import RefusedRequest

            held = self.bench.loaded
            raise RefusedRequest(f"The engine holds {'no model' if held is None else held.source}, not "
                                 f"{model.source}: load it first.")

    def _graph(self, key, request, cancel, send):
        from inspector.core.graph.served import record

        self._held(request.model)
        return record(self.bench, request, cancel)

    def _values(self, key, request, cancel, send):
        from inspector.core.graph.served import values

        self._held(request.model)
        return values(self.bench, request, cancel)

    def _atlas(self, key, request, cancel, send):
        from inspector.core.atlas import run_atlas
        from inspector.core.atlas.pictures import open_atlas, top_pictures

        if request.kind == "build":
            self._images_inside(request.data_dir, request.out_dir)
            loaded, _ = self.bench.load(request.model)
            try:
                run_atlas(loaded, request.data_dir, ",".join(request.layers), request.top, request.out_dir,
                          batch=request.batch, device=request.device, progress=Progress(key, send),
                          cancel=cancel.is_set, use_ray=self.ray is not None, ray_address=self.ray)
            finally:
                self.bench.move_to(self.device)
        opened = open_atlas(request.out_dir)
        if opened.data is not None:  # its pictures are read from the folder it was built over
            self.root.check(opened.data, "The atlas's image folder")
        if request.kind == "pictures":
            return top_pictures(opened, request.layer, request.channel)
        return opened

    def _concepts(self, key, request, cancel, send):
        return self.concepts.answer(request)

    def _learn(self, key, request, cancel, send):
        self._images_inside(request.data_dir, request.out_dir)
        return self.concepts.learn(request, StagedProgress(key, send), cancel.is_set, self.device, self.ray)

    def _checks(self, key, request, cancel, send):
        from .trust import check_maps

        return check_maps(self.bench, request, cancel, key, send)

    def _evaluate(self, key, request, cancel, send):
        from .trust import evaluate

        self._images_inside(request.data_dir, request.out_dir)
        return evaluate(self.bench, request, cancel, Progress(key, send), self.device, self.ray)

    def _catalogue(self, key, request, cancel, send):
        from inspector.core.sources.timm_models import catalogue
        from inspector.core.sources.torchvision_models import torchvision_names

        return list(torchvision_names()) + list(catalogue())

    def _images_inside(self, data_dir: str, out_dir: str) -> None:
        """Every image a folder job (an atlas, a concepts build) would read (a linked folder followed) is inside the data root."""
        from pathlib import Path

        from inspector.core.inputs.image_sets import list_images

        for path in list_images(data_dir, exclude=Path(out_dir)).files:
            self.root.check(str(path), "An image of the data folder")


def _free_device_memory() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()
