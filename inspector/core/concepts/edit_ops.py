"""Concept edits: remove or scale one concept's component in a layer's output.

A dictionary (written by `network-inspector concepts --out DIR`) holds K directions d_0 .. d_{K-1} over the
layer's C channels. At each position (a map's (h, w), a token, a row of (N, C)) of the output x, c(x) are the
concept coefficients: NMF's non-negative least squares for the fixed directions, a sparse autoencoder's encoder
(top-k of ReLU(W (x - pre_bias) + b)), d_i then the decoder's row i. The edits are exact, not a reconstruction:

    ablate_concept(id=i):        x - c_i(x) d_i
    scale_concept(id=i, k=k):    x + (k - 1) c_i(x) d_i       (k = 1: x; k = 0: the ablation)

so what the dictionary does not explain stays as it was. c is worked out from the tensor the edit is given (the
layer's unedited output, unless an earlier edit on the same key changed it), without gradient: the backward
sees c_i d_i as a fixed tensor. A dictionary is read once per file version (path, time and size) and kept on
each device and dtype it is used with.

The two ops are registered here into the one op table (inspector.core.edits.table), which names this module
among its plugins: reading their rows (a text that names one parsed, an edit of one applied or checked before a
run) imports it. The engine's hooks apply them as any edit (`Edit.apply`, with the edit's layer), and
`check_edits` runs `before_run` here; the edits package and the hooks import nothing of the concepts package.
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..edits import OpSpec, register_op
from ..common.errors import SpecError
from ..storage.paths import check_name
from .dictionary import DICTIONARY_FILE, ConceptError

if TYPE_CHECKING:
    import torch

    from ..edits import Edit
    from .dictionary import Dictionary

CONCEPT_OPS = ("ablate_concept", "scale_concept")


def ablate_concept(t: torch.Tensor, id: int, dict: str, layer: str | None = None) -> torch.Tensor:
    """x - c_i d_i: concept `id` of the dictionary in folder `dict` taken out of `t`, the output of `layer`."""
    c, d = _component(t, id, dict, layer)
    return t - c * d


def scale_concept(t: torch.Tensor, id: int, k: float, dict: str, layer: str | None = None) -> torch.Tensor:
    """x + (k - 1) c_i d_i: concept `id`'s component in `t` times k (k = 0 removes it, 1 keeps it)."""
    if isinstance(k, bool) or not isinstance(k, (int, float)) or not math.isfinite(k):
        raise SpecError(f"scale_concept: k must be a finite number, not {k!r}.")
    c, d = _component(t, id, dict, layer)
    return t + (k - 1) * (c * d)


def _component(t: torch.Tensor, id: int, folder: str, layer: str | None) -> tuple[torch.Tensor, torch.Tensor]:
    """c_i at each position (the channel dim of size 1) and d_i shaped to broadcast over `t`."""
    import torch

    dictionary, directions = _placed(*_version(folder), t.device, t.dtype)
    check_dictionary(dictionary, id, layer)
    try:
        with torch.no_grad():
            coefficients = dictionary.coefficients(t.detach())
    except ConceptError as exc:
        raise SpecError(str(exc)) from None
    dim = 1 if (t.dim() == 4 and dictionary.layout == "NCHW") else t.dim() - 1
    shape = [1] * t.dim()
    shape[dim] = -1
    return coefficients.narrow(dim, id, 1), directions[id].view(shape)


def check_dictionary(dictionary: Dictionary, id: int, layer: str | None = None, model: str | None = None) -> None:
    """SpecError when the dictionary is another layer's or model's, or has no concept `id`."""
    try:
        dictionary.check(layer=layer, model=model, concept=id)
    except ConceptError as exc:
        raise SpecError(str(exc)) from None


def before_run(edit: Edit, model) -> None:
    """Before a run of `model` (its source, as the dictionary records it, or the loaded model, whose weights must
    then be those the dictionary was learned on): the concept edit's dictionary can be read, is of its layer and
    model, and has its concept; applies at LAYER:output only (an edit built by hand may name another site)."""
    if edit.key.site != "output":
        raise SpecError(f"Edit {edit}: {edit.op} applies at a layer's output ({edit.key.layer}:output) only, "
                        f"not at {edit.key.site}.")
    args = dict(edit.args)
    try:
        dictionary = _read(*_version(args["dict"]))
        check_dictionary(dictionary, args["id"], edit.key.layer, model)
    except SpecError as exc:
        raise SpecError(f"Edit {edit}: {exc}") from None


def check_args(name: str, values: dict) -> None:
    """The text's arguments a concept op refuses before torch: a folder not in quotes, an id that is no concept."""
    folder = values.get("dict")
    if "dict" in values and (not isinstance(folder, str) or not folder.strip()):
        raise SpecError(f"{name}: dict must be a concepts folder in quotes, e.g. dict='concepts/'.")
    if "id" in values and (not isinstance(values["id"], int) or values["id"] < 0):
        raise SpecError(f"{name}: id must be a whole number >= 0 (a concept of the dictionary), not {values['id']!r}.")


def _version(folder: str) -> tuple[str, int, int]:
    """The dictionary file's resolved path, modification time and size: what the caches are keyed by."""
    path = Path(check_name(folder, "The dictionary folder", SpecError)).expanduser()  # a NUL, a name too long
    if path.is_dir():
        path = path / DICTIONARY_FILE
    try:
        path = path.resolve()
        stat = path.stat()
    except OSError:
        return str(path), -1, -1  # load_dictionary says what is missing
    return str(path), stat.st_mtime_ns, stat.st_size


@lru_cache(maxsize=8)
def _read(path: str, mtime_ns: int, size: int) -> Dictionary:
    # looked up when called, not imported with this module: a test counts the reads
    from .dictionary import load_dictionary

    try:
        return load_dictionary(path)
    except ConceptError as exc:
        raise SpecError(str(exc)) from None


@lru_cache(maxsize=8)
def _placed(path: str, mtime_ns: int, size: int, device: torch.device,
            dtype: torch.dtype) -> tuple[Dictionary, torch.Tensor]:
    """The dictionary with its tensors on `device` (float32, as its arithmetic wants) and its directions (K, C)
    in `dtype`, the layer's."""
    from dataclasses import fields, replace

    import torch

    dictionary = _read(path, mtime_ns, size)
    moved = {f.name: getattr(dictionary, f.name).to(device) for f in fields(dictionary)
             if isinstance(getattr(dictionary, f.name), torch.Tensor)}
    return replace(dictionary, **moved), dictionary.components.to(device=device, dtype=dtype)


_QUOTES = ", and a concept edit's folder in quotes: dict='DIR'"
_ROW = {"sites": ("output",), "takes_layer": True, "texts": ("dict",), "hint": _QUOTES, "check_args": check_args,
        "before_run": before_run}
register_op("ablate_concept", OpSpec(ablate_concept, ("id", "dict"), 2, "ablate_concept(id, dict='DIR'): at "
                                     "LAYER:output, remove concept id of the dictionary in DIR (x - c_id d_id)",
                                     **_ROW))
register_op("scale_concept", OpSpec(scale_concept, ("id", "k", "dict"), 3, "scale_concept(id, k, dict='DIR'): at "
                                    "LAYER:output, scale concept id's component by k (x + (k - 1) c_id d_id)", **_ROW))
