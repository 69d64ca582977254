"""The Concepts view's work on the server's engine thread, over the Workbench that holds the model: open a
dictionary folder, read an image's concepts, one concept's relevance map, a concept's page as pixels, and learn a
dictionary over a folder of images (progress by stage, cancelled between batches, resumed by building again).

The reads are the app's own worker's (`gui/worker_concepts.ConceptJobs`): both ask `inspector.core.concepts.reading`,
answered with the records of `inspector.core.records.concepts`. Every folder and file a request names was checked
against the data root before (`admission`); a build's every image is checked here, as an atlas build's.
"""

from __future__ import annotations

from inspector.core.records.concepts import BuildConceptsRequest, ConceptsRequest


class ServedConcepts:
    """`bench`: the server's Workbench. Dictionaries read are kept by folder while their file stays the same."""

    def __init__(self, bench) -> None:
        from inspector.core.concepts.reading import ConceptReader

        self.bench = bench
        self.reader = ConceptReader()

    def answer(self, request: ConceptsRequest):
        """What `request` comes to: an OpenedConcepts, a ConceptsRead (or a cancelled Failure: another model is
        held), a ConceptMap, a ConceptPagePicture. Errors raise (the server says them as failures)."""
        if request.kind == "page":
            from inspector.core.concepts.reading import page_picture

            return page_picture(request.folder, request.concept)
        return getattr(self.reader, request.kind)(request, self.bench)

    def learn(self, request: BuildConceptsRequest, progress, cancel, device: str, ray: str | None) -> str:
        """Learn the dictionary into `request.out_dir` (the folder, once done); RunCancelled when `cancel()` came
        (its state is kept: the same request later resumes). The model goes back to the server's `device`."""
        from inspector.core.concepts import learn_concepts

        loaded, _tree = self.bench.load(request.model)
        try:
            learn_concepts(loaded, request.data_dir, request.layer, request.out_dir, method=request.method,
                           k=request.k, sparsity=request.sparsity, device=request.device, progress=progress,
                           cancel=cancel, use_ray=ray is not None, ray_address=ray)
        finally:
            self.bench.move_to(device)
        return request.out_dir
