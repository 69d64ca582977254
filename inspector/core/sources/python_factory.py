"""`file.py:Name` and `package.module:Name`: a class or zero-argument factory, run under a seed."""

from __future__ import annotations

import importlib
import importlib.util
import sys

from torch import nn

from ..common.errors import ModelLoadError
from ..storage.paths import regular_file
from .loaded import LoadedModel
from .weights import seeded


def load(source: str, seed: int | None) -> LoadedModel:
    target, name = source.rsplit(":", 1)
    if target.lower().endswith(".py"):
        path = regular_file(target, "Python file", ModelLoadError)
        module_name = f"_inspector_user_{abs(hash(str(path.resolve())))}"
        spec = importlib.util.spec_from_file_location(module_name, path)
        code = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = code
        try:
            spec.loader.exec_module(code)
        except Exception as exc:
            sys.modules.pop(module_name, None)
            raise ModelLoadError(f"Running {path} failed: {type(exc).__name__}: {exc}") from exc
    else:
        try:
            code = importlib.import_module(target)
        except Exception as exc:
            raise ModelLoadError(f"Cannot import {target}: {type(exc).__name__}: {exc}") from exc
    factory = getattr(code, name, None)
    if factory is None:
        found = sorted(n for n, v in vars(code).items() if isinstance(v, type) and issubclass(v, nn.Module))
        raise ModelLoadError(f"{target} has no {name!r}. Modules defined there: {', '.join(found) or 'none'}.")
    try:
        if seed is None:
            module = factory()
        else:
            with seeded(seed):
                module = factory()
    except Exception as exc:
        raise ModelLoadError(f"{source}() failed: {type(exc).__name__}: {exc}") from exc
    if not isinstance(module, nn.Module):
        raise ModelLoadError(f"{source} returned {type(module).__name__}, not a torch.nn.Module.")
    shape = getattr(module, "input_shape", None) or getattr(factory, "input_shape", None)
    labels = getattr(module, "labels", None)
    notes = [] if seed is None else [f"Built under seed {seed}: any random initialisation repeats with this seed."]
    return LoadedModel(module, source, "as built", list(labels) if labels else None, None,
                       tuple(shape) if shape else None, "python", notes, seed)

