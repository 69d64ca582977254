"""The Concepts view's requests and answers as records that cross to an engine (in this process or a server's):
open a dictionary folder, read an image's concepts, one concept's relevance map, a concept's page, and learn a
dictionary over a folder of images. Torch-free and Qt-free (numpy at most).

The app's own worker (`gui/worker_concepts`) holds records of the same names and fields; a remote engine's
answers are these, and the window's face of that engine gives them to the view as the worker's (field by field).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .requests import ModelRequest

#: What a ConceptsRequest asks for.
CONCEPT_KINDS = ("open", "read", "map", "page")


@dataclass(frozen=True)
class ConceptsRequest:
    """`kind`: "open" the dictionary in `folder` for `model`; "read" the concepts of `input` (a source the engine
    reads, as a run does; with `frame`, that video frame) and the relevance map of `concept` for `target`; "map":
    that map alone; "page": concept `concept`'s page (pages/concept_NNN.png) as pixels."""

    kind: str
    folder: str
    model: ModelRequest
    input: str = ""
    target: int | None = None
    concept: int | None = None
    device: str = "cpu"
    run_id: int = 0
    frame: object = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.kind not in CONCEPT_KINDS:
            raise ValueError(f"a ConceptsRequest's kind is one of {', '.join(CONCEPT_KINDS)}, not {self.kind!r}")
        if not isinstance(self.folder, str) or not isinstance(self.model, ModelRequest):
            raise TypeError("a ConceptsRequest names its folder as text and its model as a ModelRequest")


@dataclass(frozen=True)
class BuildConceptsRequest:
    """Learn `k` concepts of `layer` of `model` over the images in `data_dir` with `method`, into `out_dir`."""

    model: ModelRequest
    data_dir: str
    layer: str
    k: int
    method: str
    out_dir: str
    device: str = "cpu"
    sparsity: int | None = None  # the sae's top-k

    def __post_init__(self) -> None:
        if not isinstance(self.model, ModelRequest) or not all(
                isinstance(v, str) for v in (self.data_dir, self.layer, self.method, self.out_dir)):
            raise TypeError("a BuildConceptsRequest names its model as a ModelRequest and its folders, layer and "
                             "method as text")


@dataclass(frozen=True)
class OpenedConcepts:
    folder: str
    layer: str
    method: str
    k: int
    model: str  # the model the dictionary was learned on
    record: dict  # concepts.json ({} when the folder has none: no pages, no fit figures)


@dataclass(frozen=True)
class ConceptsRead:
    """The concepts of one image: `coefficients` (K,), `maps` (K, H, W) each concept's coefficient at each position
    upsampled to the input's size (bilinear, half-pixel centres), `grid` (K, h, w) as the layer has them,
    `relevance` (K,) gradient x coefficient for `target` (None when the model's output has no class to take)."""

    run_id: int
    folder: str
    layer: str
    coefficients: np.ndarray
    maps: np.ndarray
    grid: np.ndarray
    relevance: np.ndarray | None
    target: int | None
    seconds: float = 0.0


@dataclass(frozen=True)
class ConceptMap:
    """The input map (H, W) of concept `concept`'s relevance for `target` (its gradient taken through that concept
    only); `map` None with `why` when it could not be made."""

    run_id: int
    concept: int
    target: int | None
    map: np.ndarray | None
    why: str = ""


@dataclass(frozen=True)
class ConceptPagePicture:
    """Concept `concept`'s page of dictionary `folder` (its top images, the region where it is strongest outlined)
    as RGB pixels (H, W, 3) uint8; `rgb` None with `why` when the folder has none (learned without pictures)."""

    folder: str
    concept: int
    rgb: np.ndarray | None
    why: str = ""
