"""The Concepts view's work on the server's engine thread, over the Workbench that holds the model: open a
dictionary folder, read an image's concepts, one concept's relevance map, a concept's page as pixels, and learn a
dictionary over a folder of images (progress by stage, cancelled between batches, resumed by building again).

The same steps as the app's own worker (`gui/worker_concepts.ConceptJobs`), answered with the records of
`inspector.core.records.concepts`. Every folder and file a request names was checked against the data root before
(`admission`); a build's every image is checked here, as an atlas build's.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from inspector.core.records.concepts import (BuildConceptsRequest, ConceptMap, ConceptPagePicture, ConceptsRead,
                                             ConceptsRequest, OpenedConcepts)
from inspector.core.records.failure import Failure, failure


def upsampled(maps, size: tuple[int, int]) -> np.ndarray:
    """(K, h, w) maps at (H, W): bilinear with half-pixel centres (as the app's worker brings them to the input)."""
    import torch
    import torch.nn.functional as F

    m = torch.as_tensor(maps, dtype=torch.float32)[None]
    if tuple(m.shape[-2:]) == tuple(size):
        return m[0].numpy().copy()
    return F.interpolate(m, size=tuple(size), mode="bilinear", align_corners=False)[0].numpy()


class ServedConcepts:
    """`bench`: the server's Workbench. Dictionaries read are kept by folder while their file stays the same."""

    def __init__(self, bench) -> None:
        self.bench = bench
        self._dictionaries: dict = {}  # folder -> (file's mtime, Dictionary)

    def answer(self, request: ConceptsRequest):
        """What `request` comes to: an OpenedConcepts, a ConceptsRead (or a cancelled Failure: another model is
        held), a ConceptMap, a ConceptPagePicture. Errors raise (the server says them as failures)."""
        return getattr(self, "_" + request.kind)(request)

    def _loaded(self, model):
        return self.bench.loaded if self.bench.holds(model) else None

    def _dictionary(self, folder: str):
        from inspector.core.concepts import load_dictionary
        from inspector.core.concepts.dictionary import DICTIONARY_FILE

        path = Path(folder) / DICTIONARY_FILE
        stamp = path.stat().st_mtime_ns if path.is_file() else None
        kept = self._dictionaries.get(folder)
        if kept is None or kept[0] != stamp:
            kept = self._dictionaries[folder] = (stamp, load_dictionary(folder))
        return kept[1]

    def _open(self, request: ConceptsRequest) -> OpenedConcepts:
        from inspector.core.concepts import ConceptError, read_record
        from inspector.core.concepts.store import RECORD_FILE

        dictionary = self._dictionary(request.folder)
        loaded = self._loaded(request.model)
        if loaded is not None:
            dictionary.check(model=loaded)  # the source and the weights it was learned on
        record = read_record(request.folder) if (Path(request.folder) / RECORD_FILE).is_file() else {}
        if record and record.get("k") != dictionary.k:
            raise ConceptError(f"{request.folder} is damaged: its record has {record.get('k')} concepts, its "
                               f"dictionary {dictionary.k}.")
        return OpenedConcepts(request.folder, dictionary.layer, dictionary.method, dictionary.k, dictionary.model,
                              record)

    def _read(self, request: ConceptsRequest):
        from inspector.core.concepts.on_image import read_concepts

        start = time.perf_counter()
        loaded = self._loaded(request.model)
        if loaded is None:  # another model is loaded meanwhile: the view asks again with its next result
            return Failure("Another model was loaded meanwhile.", "concepts", "", request.run_id, True)
        dictionary = self._dictionary(request.folder)
        dictionary.check(model=loaded)
        x = self.bench.input_tensor(request.input, request.frame)
        reading = read_concepts(loaded, x, dictionary, target=request.target, device=request.device)
        grid = reading.maps.detach().float().cpu().numpy()
        return ConceptsRead(request.run_id, request.folder, reading.layer,
                            reading.coefficients.detach().float().cpu().numpy(), upsampled(grid, tuple(x.shape[-2:])),
                            grid, None if reading.relevance is None else
                            reading.relevance.detach().float().cpu().numpy(), reading.target,
                            time.perf_counter() - start)

    def _map(self, request: ConceptsRequest) -> ConceptMap:
        from inspector.core.concepts.on_image import concept_relevance_map

        loaded = self._loaded(request.model)
        if loaded is None or request.target is None or request.concept is None:
            why = "Another model was loaded meanwhile." if loaded is None else "No class to take the relevance for."
            return ConceptMap(request.run_id, request.concept if request.concept is not None else -1,
                              request.target, None, why)
        try:
            x = self.bench.input_tensor(request.input, request.frame)
            found = concept_relevance_map(loaded, x, self._dictionary(request.folder), request.concept,
                                          request.target, device=request.device)
        except Exception as exc:  # noqa: BLE001 - said in the map's place, as the app's worker says it
            return ConceptMap(request.run_id, request.concept, request.target, None,
                              failure(exc, "concepts").message)
        return ConceptMap(request.run_id, request.concept, request.target, found.detach().float().cpu().numpy())

    def _page(self, request: ConceptsRequest) -> ConceptPagePicture:
        from PIL import Image

        from inspector.core.concepts.store import page_path

        path = page_path(request.folder, request.concept if request.concept is not None else -1)
        if not path.is_file():
            return ConceptPagePicture(request.folder, int(request.concept), None,
                                      f"No page at {path} (the dictionary was learned without pictures).")
        with Image.open(path) as image:
            rgb = np.asarray(image.convert("RGB"), dtype=np.uint8).copy()
        return ConceptPagePicture(request.folder, int(request.concept), rgb)

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
