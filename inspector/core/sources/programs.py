"""Saved programs: TorchScript, `torch.export` `.pt2`, and pickled whole models; each may carry
code, so each loads only with trust."""

from __future__ import annotations

import warnings
import zipfile
from pathlib import Path

import torch
from torch import nn

from ..common.errors import ModelLoadError, UntrustedCodeError
from ..storage.paths import regular_file
from .checkpoints import read_checkpoint
from .loaded import LoadedModel


def load(path: Path, trust: bool) -> LoadedModel:
    path = regular_file(path, "Model file", ModelLoadError)
    if trust is not True:
        raise UntrustedCodeError(
            f"{path.name} is a saved program that can run code when loaded. "
            f"Pass --trust (or confirm in the app) only if you trust where it came from."
        )
    if path.suffix.lower() == ".pt2":
        try:
            program = torch.export.load(str(path))
            module = torch.export.unflatten(program)
        except Exception as exc:
            raise ModelLoadError(f"Cannot load exported program {path}: {type(exc).__name__}: {exc}") from exc
        shape = _first_input_shape(program)
        loaded = LoadedModel(module, str(path), "in file", None, None, shape, "export")
        if loaded.most_batch == 1:  # found here once and kept for the module: the passes read it (passes.batching)
            loaded.notes.append("Exported with a static batch of 1: the methods that run many copies of the input "
                                "run them one at a time (export with a torch.export.Dim batch to run them together).")
        return loaded
    if _is_torchscript(path):
        try:
            with warnings.catch_warnings():  # torch's own 'torch.jit.load is deprecated' is no news to the user
                warnings.filterwarnings("ignore", message=r".*torch\.jit\.load.* is deprecated", category=FutureWarning)
                module = torch.jit.load(str(path), map_location="cpu")
        except Exception as exc:
            raise ModelLoadError(f"Cannot load TorchScript {path}: {type(exc).__name__}: {exc}") from exc
        return LoadedModel(module, str(path), "in file", None, None, None, "torchscript",
                           ["TorchScript: only the model input and output can be hooked reliably."])
    state = read_checkpoint(path, trust=True)
    if not isinstance(state, nn.Module):
        raise ModelLoadError(f"{path.name} holds weights, not a model: pass it with --weights and a model source.")
    return LoadedModel(state, str(path), "in file", None, None, None, "pickle")


def _is_torchscript(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path) as archive:
            return any(name.split("/", 1)[-1].startswith("code/") for name in archive.namelist())
    except (zipfile.BadZipFile, OSError):
        return False


def _first_input_shape(program) -> tuple[int, ...] | None:
    try:
        for spec in program.graph_signature.input_specs:
            if spec.kind.name == "USER_INPUT":
                value = program.graph.find_nodes(op="placeholder", target=spec.arg.name)[0].meta["val"]
                return tuple(_example_size(s, i) for i, s in enumerate(value.shape))
    except Exception:
        return None
    return None


def _example_size(size, axis: int) -> int:
    """One side of the default input: a static size as it is; a dynamic one (a torch.export.Dim's symbol) its
    example's size, a batch of 1, read from the symbol's hint: `int()` of a symbol guards on it, which made the
    loaded program's batch static (a Dim batch exported at 2 then took only 2)."""
    if isinstance(size, int):
        return size
    return 1 if axis == 0 else int(size.node.hint)
