"""The Concepts view's reads, answered as records wherever the engine is: the app's worker (`gui/worker_concepts`)
and a server (`remote/concepts`) both ask a `ConceptReader` to open a dictionary folder, read an image's concepts,
make one concept's relevance map, and read a concept's page as pixels (`page_picture`). Qt-free.

`bench` is the engine's Workbench (the model it holds, the inputs it decodes); the records are
`inspector.core.records.concepts`'. Errors raise (each side says them its own way), except where a record has room
for them: a read of a model no longer held is a cancelled Failure (the view asks again with its next result), a map
that could not be made is a ConceptMap saying why, a page the folder lacks a ConceptPagePicture saying so.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ..records.concepts import (
    ConceptMap,
    ConceptPagePicture,
    ConceptsRead,
    ConceptsRequest,
    OpenedConcepts,
)
from ..records.failure import Failure, failure

ANOTHER_MODEL = "Another model was loaded meanwhile."


def upsampled(maps, size: tuple[int, int]) -> np.ndarray:
    """(K, h, w) maps at (H, W): bilinear with half-pixel centres (as attribution maps are brought to the input)."""
    import torch
    import torch.nn.functional as F

    m = torch.as_tensor(maps, dtype=torch.float32)[None]
    if tuple(m.shape[-2:]) == tuple(size):
        return m[0].numpy().copy()
    return F.interpolate(m, size=tuple(size), mode="bilinear", align_corners=False)[0].numpy()


def _numpy(tensor) -> np.ndarray:
    return tensor.detach().float().cpu().numpy()


def _held(bench, model):
    """The model `bench` holds when it is the one `model` asks for; None else."""
    return bench.loaded if bench.holds(model) else None


class ConceptReader:
    """Dictionaries read are kept by folder while their file stays the same (its modification time)."""

    def __init__(self) -> None:
        self._dictionaries: dict = {}  # folder -> (file's mtime, Dictionary)

    def dictionary(self, folder: str):
        """The Dictionary in `folder`, read again when its file changed; ConceptError in one line."""
        from .dictionary import DICTIONARY_FILE, load_dictionary

        path = Path(folder) / DICTIONARY_FILE
        stamp = path.stat().st_mtime_ns if path.is_file() else None
        kept = self._dictionaries.get(folder)
        if kept is None or kept[0] != stamp:
            kept = self._dictionaries[folder] = (stamp, load_dictionary(folder))
        return kept[1]

    def open(self, request: ConceptsRequest, bench) -> OpenedConcepts:
        """The dictionary in `request.folder` with its record (concepts.json; {} where the folder has none),
        checked against the model held when it is the one asked for (its source and weights)."""
        from .dictionary import ConceptError
        from .store import RECORD_FILE, read_record

        dictionary = self.dictionary(request.folder)
        loaded = _held(bench, request.model)
        if loaded is not None:
            dictionary.check(model=loaded)  # the source and the weights it was learned on
        record = read_record(request.folder) if (Path(request.folder) / RECORD_FILE).is_file() else {}
        if record and record.get("k") != dictionary.k:
            raise ConceptError(f"{request.folder} is damaged: its record has {record.get('k')} concepts, its "
                               f"dictionary {dictionary.k}.")
        return OpenedConcepts(request.folder, dictionary.layer, dictionary.method, dictionary.k, dictionary.model,
                              record)

    def read(self, request: ConceptsRequest, bench) -> ConceptsRead | Failure:
        """The concepts of `request.input` (its `frame`, for a video's): the coefficients and relevance the bars
        draw, each concept's map at the layer and at the input's size; a cancelled Failure when the model asked
        for is no longer held."""
        from .on_image import read_concepts

        start = time.perf_counter()
        loaded = _held(bench, request.model)
        if loaded is None:  # another model is loaded meanwhile: the view asks again with its next result
            return Failure(ANOTHER_MODEL, "concepts", "", request.run_id, True)
        dictionary = self.dictionary(request.folder)
        dictionary.check(model=loaded)  # the source and the weights it was learned on
        x = bench.input_tensor(request.input, request.frame)
        reading = read_concepts(loaded, x, dictionary, target=request.target, device=request.device)
        grid = _numpy(reading.maps)
        return ConceptsRead(request.run_id, request.folder, reading.layer, _numpy(reading.coefficients),
                            upsampled(grid, tuple(x.shape[-2:])), grid,
                            None if reading.relevance is None else _numpy(reading.relevance), reading.target,
                            time.perf_counter() - start)

    def map(self, request: ConceptsRequest, bench, target: int | None = None) -> ConceptMap:
        """Concept `request.concept`'s relevance map over the input for `target` (`request.target` when None);
        without a map, saying why, when it could not be made."""
        from .on_image import concept_relevance_map

        target = request.target if target is None else target
        concept = request.concept if request.concept is not None else -1
        loaded = _held(bench, request.model)
        if loaded is None or target is None or request.concept is None:
            why = ANOTHER_MODEL if loaded is None else "No class to take the relevance for." if target is None \
                else "No concept picked."
            return ConceptMap(request.run_id, concept, target, None, why)
        try:
            x = bench.input_tensor(request.input, request.frame)
            found = concept_relevance_map(loaded, x, self.dictionary(request.folder), request.concept, target,
                                          device=request.device)
        except Exception as exc:  # noqa: BLE001 - said in the map's place
            return ConceptMap(request.run_id, concept, target, None, failure(exc, "concepts").message)
        return ConceptMap(request.run_id, concept, target, _numpy(found))


def page_picture(folder: str, concept: int) -> ConceptPagePicture:
    """Concept `concept`'s page in the dictionary `folder` (pages/concept_NNN.png, as `network-inspector concepts`
    wrote it) as RGB pixels; without pixels, saying so, when the folder has no page (learned without pictures).
    An id that is no concept's, a page that is no picture: ConceptError / ArgumentValueError in one line."""
    from PIL import Image, UnidentifiedImageError

    from .dictionary import ConceptError
    from .store import page_path

    path = page_path(folder, -1 if concept is None else concept)
    if not path.is_file():
        return ConceptPagePicture(folder, int(concept), None,
                                  f"No page at {path} (the dictionary was learned without pictures).")
    try:
        with Image.open(path) as image:
            rgb = np.asarray(image.convert("RGB"), dtype=np.uint8).copy()
    except (OSError, UnidentifiedImageError) as exc:
        raise ConceptError(f"{path} could not be read as a picture ({exc}).") from exc
    return ConceptPagePicture(folder, int(concept), rgb)


__all__ = ["ANOTHER_MODEL", "ConceptReader", "page_picture", "upsampled"]
