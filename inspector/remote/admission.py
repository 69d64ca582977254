"""What a client's request may make the server do: name files inside the data root only, and run code only when
the server itself was started with `--trust` (a client's `trust=True` grants nothing).

`admit(body, root, trusted)` returns the request the engine runs (every model request's trust set to the
server's) or raises RefusedRequest / UntrustedCodeError (the engine's own) in one line.
"""

from __future__ import annotations

from dataclasses import replace

from inspector.core.common.errors import UntrustedCodeError
from inspector.core.records.concepts import BuildConceptsRequest, ConceptsRequest
from inspector.core.records.evaluation import EvaluationRequest
from inspector.core.records.graph import GraphRequest, GraphValuesRequest
from inspector.core.records.requests import AgainstRequest, AtlasRequest, MapRequest, ModelRequest, RunRequest
from inspector.core.sources.hf_hub import hf_spec
from inspector.core.sources.refs import PYTHON_SUFFIXES, parse_source

from .data_root import DataRoot

#: Weights words that name no file (inspector.core.sources.weights.RANDOM_WORDS and "pretrained").
WEIGHT_WORDS = (None, "", "random", "default", "pretrained")


def admit(body, root: DataRoot, trusted: bool):
    """`body` (a request record) as the engine may run it on this server."""
    if isinstance(body, ModelRequest):
        return _model(body, root, trusted)
    if isinstance(body, RunRequest):
        if body.frame is None and not body.input.startswith("sample:"):
            root.check(body.input, "The input")
        against = body.against
        if against is not None:
            _edits(against.edits, root)
            against = replace(against, model=_model(against.model, root, trusted))
        _edits(body.spec.edits, root)
        return replace(body, model=_model(body.model, root, trusted), against=against)
    if isinstance(body, MapRequest):  # an AttributionRequest, a TrustRequest
        if not body.input.startswith("sample:"):
            root.check(body.input, "The input")
        _baseline(body.options, root)
        return replace(body, model=_model(body.model, root, trusted))
    if isinstance(body, AtlasRequest):
        root.check(body.out_dir, "The atlas folder")
        if body.data_dir:
            root.check(body.data_dir, "The data folder")
        return body if body.model is None else replace(body, model=_model(body.model, root, trusted))
    if isinstance(body, ConceptsRequest):
        root.check(body.folder, "The dictionary folder")
        _frame(body.frame)
        if body.kind in ("read", "map") and body.frame is None and not body.input.startswith("sample:"):
            root.check(body.input, "The input")
        return replace(body, model=_model(body.model, root, trusted))
    if isinstance(body, BuildConceptsRequest):
        root.check(body.data_dir, "The data folder")
        root.check(body.out_dir, "The concepts folder")
        return replace(body, model=_model(body.model, root, trusted))
    if isinstance(body, EvaluationRequest):
        root.check(body.data_dir, "The data folder")
        root.check(body.out_dir, "The evaluation folder")
        return replace(body, model=_model(body.model, root, trusted))
    if isinstance(body, (GraphRequest, GraphValuesRequest)):
        if body.frame is None and body.input and not body.input.startswith("sample:"):
            root.check(body.input, "The input")
        if isinstance(body, GraphValuesRequest):
            _edits(body.edits, root)
            if body.against is not None:
                body = replace(body, against=_model(body.against, root, trusted))
        return replace(body, model=_model(body.model, root, trusted))
    if isinstance(body, AgainstRequest):  # not a request of its own; here for completeness
        return replace(body, model=_model(body.model, root, trusted))
    return body


def _frame(frame) -> None:
    """A video frame crosses as an (H, W, 3) uint8 array, or not at all."""
    import numpy as np

    from .errors import RefusedRequest

    if frame is not None and not (isinstance(frame, np.ndarray) and frame.dtype == np.uint8 and frame.ndim == 3
                                  and frame.shape[2] == 3 and frame.size > 0):
        raise RefusedRequest("A video frame is an (H, W, 3) uint8 array: refused.")


def _model(request: ModelRequest, root: DataRoot, trusted: bool) -> ModelRequest:
    source = request.source.strip()
    ref = parse_source(source)
    if ref.kind == "hf":
        name = hf_spec(source)[0]
        if _path_like(name):
            root.check(name, "The model folder")
    elif ref.kind == "factory":
        file = source.rsplit(":", 1)[0]
        if file.lower().endswith(PYTHON_SUFFIXES):
            root.check(file, "The model's Python file")
    elif ref.kind == "program":
        root.check(source, "The model file")
    if request.weights not in WEIGHT_WORDS:
        root.check(request.weights, "The weights file")
    if not trusted:
        from inspector.core.sources.trust import carries_code

        if carries_code(source):
            raise UntrustedCodeError(f"Loading {source} would run code from it, and this server was not started "
                                     f"with --trust (a client cannot grant trust): refused.")
    return replace(request, trust=trusted)


def _path_like(name: str) -> bool:
    """An hf: name that is (or may be) a folder rather than a hub id (`org/name`)."""
    import os

    return (os.path.isdir(os.path.expanduser(name)) or name.startswith((".", "/", "~")) or name.count("/") > 1
            or "\\" in name)


def _baseline(options, root: DataRoot) -> None:
    """An attribution's baseline by file (a name of BASELINES is no file)."""
    from inspector.core.records.methods import BASELINES

    for name, value in options:
        if name == "baseline" and isinstance(value, str) and value not in BASELINES:
            root.check(value, "The baseline file")


def _edits(edits, root: DataRoot) -> None:
    from inspector.core.edits import CONCEPT_OPS

    for edit in edits:
        if edit.op in CONCEPT_OPS:
            folder = dict(edit.args).get("dict")
            if isinstance(folder, str):
                root.check(folder, f"The dictionary folder of {edit}")
