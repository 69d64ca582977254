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

The edit table (inspector.core.edits) reads and checks the ops' text without torch; they are applied here, by
the engine's hooks (`apply_edit`), because the dictionaries (inspector.core.concepts) sit above that table.
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from .errors import SpecError
from .paths import check_name

if TYPE_CHECKING:  # torch is imported where an edit is applied, so edits parse without it
    import torch

    from .concepts.dictionary import Dictionary
    from .edits import Edit

CONCEPT_OPS = ("ablate_concept", "scale_concept")


def apply_edit(edit: Edit, tensor: torch.Tensor) -> torch.Tensor:
    """`edit` applied to `tensor`, the value at its key: a concept edit here, any other by `Edit.apply`."""
    if edit.op not in CONCEPT_OPS:
        return edit.apply(tensor)
    op = ablate_concept if edit.op == "ablate_concept" else scale_concept
    try:
        return op(tensor, **dict(edit.args), layer=edit.key.layer)
    except SpecError as exc:
        raise SpecError(f"Edit {edit}: {exc}") from None
    except (TypeError, ValueError, RuntimeError, IndexError) as exc:
        raise SpecError(f"Edit {edit} failed on a tensor of shape {tuple(tensor.shape)}: {exc}") from exc


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

    from .concepts.dictionary import ConceptError

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
    from .concepts.dictionary import ConceptError

    try:
        dictionary.check(layer=layer, model=model, concept=id)
    except ConceptError as exc:
        raise SpecError(str(exc)) from None


def check_concept_edits(edits: Iterable[Edit], model) -> None:
    """Before a run of `model` (its source, as the dictionary records it, or the loaded model, whose weights must
    then be those the dictionary was learned on): every enabled concept edit's dictionary can be read, is of its
    layer and model, and has its concept; applies at LAYER:output only."""
    for edit in edits:
        if not edit.enabled or edit.op not in CONCEPT_OPS:
            continue
        if edit.key.site != "output":
            raise SpecError(f"Edit {edit}: {edit.op} applies at a layer's output ({edit.key.layer}:output) only, "
                            f"not at {edit.key.site}.")
        args = dict(edit.args)
        try:
            dictionary = _read(*_version(args["dict"]))
            check_dictionary(dictionary, args["id"], edit.key.layer, model)
        except SpecError as exc:
            raise SpecError(f"Edit {edit}: {exc}") from None


def _version(folder: str) -> tuple[str, int, int]:
    """The dictionary file's resolved path, modification time and size: what the caches are keyed by."""
    from .concepts.dictionary import DICTIONARY_FILE

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
    from .concepts.dictionary import ConceptError, load_dictionary

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
