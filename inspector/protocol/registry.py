"""The records that may cross, by name: the allowlist a message's `$record` is looked up in.

A name not here is refused (`ProtocolError`); a name here is rebuilt from its fields, by its dataclass's own
constructor. Each entry is `module:Class` in this project, imported the first time a message names it, so the
protocol stays torch-free until an engine record is read.
"""

from __future__ import annotations

import dataclasses
import importlib

from .errors import ProtocolError

_RECORDS = (
    # what the window asks for
    "inspector.core.records.requests:ModelRequest",
    "inspector.core.records.requests:AgainstRequest",
    "inspector.core.records.requests:RunRequest",
    "inspector.core.records.requests:AttributionRequest",
    "inspector.core.records.requests:AtlasRequest",
    "inspector.core.records.graph:GraphRequest",
    "inspector.core.records.graph:GraphValuesRequest",
    "inspector.core.records.concepts:ConceptsRequest",
    "inspector.core.records.concepts:BuildConceptsRequest",
    "inspector.core.records.trust:TrustRequest",
    "inspector.core.records.evaluation:EvaluationRequest",
    "inspector.core.runspec:RunSpec",
    "inspector.core.edits:Edit",
    "inspector.core.common.keys:Key",
    "inspector.core.target.text:Target",
    # what the engine says
    "inspector.core.records.failure:Failure",
    "inspector.core.model_info:ModelInfo",
    "inspector.core.sources.layers:LayerTree",
    "inspector.core.sources.layers:LayerInfo",
    "inspector.core.sources.preprocess:Preprocess",
    "inspector.core.records.tokens:TokenGrid",
    "inspector.core.workbench:RunOutcome",
    "inspector.core.workbench:StatsUpdate",
    "inspector.core.workbench:Analysis",
    "inspector.core.engine.diagnostics:FlowRow",
    "inspector.core.engine.result:RunResult",
    "inspector.core.engine.result:Capture",
    "inspector.core.engine.result:Prediction",
    "inspector.core.engine.result:HookEvent",
    "inspector.core.records.stats:TensorStats",
    "inspector.core.records.detections:Detection",
    "inspector.core.compare.diff:ModelDiff",
    "inspector.core.compare.diff:DiffRow",
    "inspector.core.compare.diff:PredictionDelta",
    "inspector.core.attribution.record:Attribution",
    "inspector.core.attribution.scores.faithfulness:Curve",
    "inspector.core.atlas.pictures:OpenedAtlas",
    "inspector.core.atlas.pictures:TopPicture",
    "inspector.core.records.graph:GraphRecorded",
    "inspector.core.graph.record.nodes:Graph",
    "inspector.core.graph.record.nodes:Node",
    "inspector.core.graph.record.nodes:Edge",
    "inspector.core.graph.record.nodes:Group",
    "inspector.core.graph.layout.graph_layout:Layout",
    "inspector.core.graph.layout.graph_layout:Box",
    "inspector.core.graph.layout.graph_layout:Frame",
    "inspector.core.graph.layout.graph_layout:Route",
    "inspector.core.graph.values.numbers:GraphValues",
    "inspector.core.graph.values.numbers:NodeValues",
    "inspector.core.graph.values.comparison:GraphComparison",
    "inspector.core.records.concepts:OpenedConcepts",
    "inspector.core.records.concepts:ConceptsRead",
    "inspector.core.records.concepts:ConceptMap",
    "inspector.core.records.concepts:ConceptPagePicture",
    "inspector.core.attribution.sanity.card:TrustCard",
    "inspector.core.attribution.sanity.card:Checked",
    "inspector.core.attribution.sanity.randomisation:Randomisation",
    "inspector.core.attribution.sanity.random_logit:RandomLogit",
    "inspector.core.attribution.scores.similarity:Similarity",
    "inspector.core.records.evaluation:EvaluationDone",
)

_BY_NAME: dict[str, str] = {entry.rpartition(":")[2]: entry for entry in _RECORDS}
_CLASSES: dict[str, type] = {}


def names() -> tuple[str, ...]:
    """Every record name that may cross."""
    return tuple(_BY_NAME)


def record_class(name: str) -> type:
    """The dataclass named `name` in the allowlist; ProtocolError for any other name."""
    if not isinstance(name, str) or name not in _BY_NAME:
        raise ProtocolError(f"Unknown record {name!r}: the protocol carries {', '.join(sorted(_BY_NAME))}.")
    cls = _CLASSES.get(name)
    if cls is None:
        module, _, attr = _BY_NAME[name].partition(":")
        cls = getattr(importlib.import_module(module), attr)
        if not dataclasses.is_dataclass(cls):
            raise TypeError(f"{_BY_NAME[name]} is in the protocol's allowlist but is not a dataclass")
        _CLASSES[name] = cls
    return cls


def name_of(cls: type) -> str:
    """The name `cls` crosses under; ProtocolError when it is not in the allowlist."""
    name = cls.__name__
    if name not in _BY_NAME or record_class(name) is not cls:  # (a record a package re-exports is the same class)
        raise ProtocolError(f"A {cls.__module__}.{cls.__qualname__} cannot be sent: it is not one of the "
                            f"protocol's records.")
    return name
