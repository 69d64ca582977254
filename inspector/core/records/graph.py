"""What the Graph tab (and `graph --engine`) asks the engine for, and what it gets back, as plain records that
cross threads and the engine protocol as they are: torch-free, Qt-free.

    GraphRequest        record the graph of the loaded model on an input   -> GraphRecorded (graph + first layout)
    GraphValuesRequest  a run's values on the nodes of a recorded graph    -> a core GraphValues / GraphComparison

The graph and its layout are `inspector.core.graph` records (`Graph`, `Layout`); a `GraphLayout`, which lays out
the next views of a graph, is no record: whoever needs one makes it from the graph (`GraphLayout(graph)`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .requests import ModelRequest


@dataclass(frozen=True)
class GraphRequest:
    """Record and lay out the graph of `model` (loaded) on `input` (a source the engine reads, as a run does; or,
    with `frame`, the name of that video frame, an (H, W, 3) uint8 array; "" the model's default input).

    `leaves`: module paths recorded as one node each, their insides left out (None: every leaf module).
    `layout`: whether to lay out the first view (every top-level group closed) as well."""

    model: ModelRequest
    input: str
    run_id: int = 0
    frame: object = field(default=None, compare=False, repr=False)
    leaves: tuple[str, ...] | None = None
    layout: bool = True


@dataclass(frozen=True)
class GraphRecorded:
    """The graph recorded for request `run_id` (a core `Graph`), its first layout (a core `Layout`, every
    top-level group closed; None when not asked for), the shape of the input it was recorded on, and how long
    recording and laying out took (s)."""

    run_id: int
    graph: object  # inspector.core.graph.Graph
    layout: object = None  # inspector.core.graph.layout.graph_layout.Layout
    input_shape: tuple[int, ...] = ()
    seconds: float = 0.0


@dataclass(frozen=True)
class GraphValuesRequest:
    """Work out `family`'s numbers on `graph` (the torch-free Graph recorded for `model` on `input`).

    `family`: "values" (one run), "edits" (edits on vs off) or "against" (the loaded model against `against`).
    `edits`: the enabled edits (core `Edit`s) of the run (`values`: applied; `edits`: on vs off; `against`: to
    the sides `edits_on` says). `names`: the two models' as the Compare tab says them. `target`: the objective as
    text. `threshold`: the relative change above which a node has diverged (None: the engine's default)."""

    model: ModelRequest
    input: str
    graph: object = field(compare=False, repr=False)  # inspector.core.graph.Graph
    family: str = "values"
    edits: tuple = ()
    against: ModelRequest | None = None
    edits_on: str = "both"
    target: str = "auto"
    run_id: int = 0
    names: tuple[str, str] = ("first", "second")  # how the two models are called (Against)
    frame: object = field(default=None, compare=False, repr=False)
    threshold: float | None = None
