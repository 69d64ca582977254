"""Model sources -> a loaded model with its preprocessing and labels.

Sources: `demo`; a torchvision classification name (`resnet18`); `file.py:Name` or
`package.module:Name` (runs that code); a TorchScript file or a `torch.export` `.pt2`
program (both may carry code, so they need `trust=True`).
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import torch
from torch import nn

from .checkpoints import apply_state_dict, read_checkpoint
from .errors import ModelLoadError, UntrustedCodeError
from .preprocess import Preprocess
from . import pretrained

ProgressFn = Callable[[int, int], None]


@dataclass
class LoadedModel:
    module: nn.Module
    source: str
    weights: str = "random"
    labels: list[str] | None = None
    preprocess: Preprocess | None = None
    input_shape: tuple[int, ...] | None = None  # the default input, batch included
    kind: str = "python"
    notes: list[str] = field(default_factory=list)

    def example_input(self) -> torch.Tensor | None:
        """A zero tensor of the default input shape, for the layer tree's one small run."""
        return torch.zeros(self.input_shape) if self.input_shape else None

    @property
    def device(self) -> torch.device:
        return next((p.device for p in self.module.parameters()), torch.device("cpu"))


def torchvision_classifiers() -> list[str]:
    """Every torchvision classification model name (no weights needed to list them)."""
    import torchvision

    return sorted(torchvision.models.list_models(module=torchvision.models))


def load_model(
    source: str,
    weights: str | None = None,
    trust: bool = False,
    progress: ProgressFn | None = None,
) -> LoadedModel:
    """Load a model from `source`; `weights` is random, pretrained or a checkpoint path."""
    source = source.strip()
    if not source:
        raise ModelLoadError("No model given. Use demo, a torchvision name like resnet18, file.py:Name or a file.")
    if source == "demo":
        loaded = _load_demo()
    elif _looks_like_factory(source):
        loaded = _load_factory(source)
    elif Path(source).suffix in (".pt2", ".pt", ".pth", ".ts", ".jit", ".torchscript") or Path(source).is_file():
        loaded = _load_program(Path(source), trust)
    else:
        return _load_torchvision(source, weights or "random", trust, progress)
    if weights not in (None, "", "random", "default"):
        _apply_weights_file(loaded, weights, trust)
    loaded.module.eval()
    return loaded


def _looks_like_factory(source: str) -> bool:
    if ":" not in source:
        return False
    left = source.rsplit(":", 1)[0]
    # `package.module` has dots, so Path(left).suffix is no test for a file name here.
    return left.endswith(".py") or (len(left) > 1 and re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", left) is not None)


def _apply_weights_file(loaded: LoadedModel, weights: str, trust: bool) -> None:
    if weights == "pretrained":
        raise ModelLoadError(f"--weights pretrained is for torchvision models; {loaded.source} has none.")
    state = read_checkpoint(weights, trust=trust)
    if isinstance(state, nn.Module):
        loaded.module = state
        loaded.notes.append(f"Whole model loaded from trusted pickle {weights}.")
    else:
        apply_state_dict(loaded.module, state, Path(weights).name)
    loaded.weights = str(weights)


def _load_demo() -> LoadedModel:
    from inspector.demo.model import load_demo

    bundle = load_demo()
    size = bundle.input_size
    prep = Preprocess(resize=size, crop=size, mean=tuple(bundle.mean), std=tuple(bundle.std))
    return LoadedModel(bundle.model, "demo", "bundled", list(bundle.labels), prep, (1, 3, size, size), "demo")


def _load_factory(source: str) -> LoadedModel:
    target, name = source.rsplit(":", 1)
    if target.endswith(".py"):
        path = Path(target)
        if not path.is_file():
            raise ModelLoadError(f"Python file not found: {path}")
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
        module = factory()
    except Exception as exc:
        raise ModelLoadError(f"{source}() failed: {type(exc).__name__}: {exc}") from exc
    if not isinstance(module, nn.Module):
        raise ModelLoadError(f"{source} returned {type(module).__name__}, not a torch.nn.Module.")
    shape = getattr(module, "input_shape", None) or getattr(factory, "input_shape", None)
    labels = getattr(module, "labels", None)
    return LoadedModel(module, source, "as built", list(labels) if labels else None, None,
                       tuple(shape) if shape else None, "python")


def _load_program(path: Path, trust: bool) -> LoadedModel:
    if not path.is_file():
        raise ModelLoadError(f"Model file not found: {path}")
    if not trust:
        raise UntrustedCodeError(
            f"{path.name} is a saved program that can run code when loaded. "
            f"Pass --trust (or confirm in the app) only if you trust where it came from."
        )
    if path.suffix == ".pt2":
        try:
            program = torch.export.load(str(path))
            module = torch.export.unflatten(program)
        except Exception as exc:
            raise ModelLoadError(f"Cannot load exported program {path}: {type(exc).__name__}: {exc}") from exc
        shape = _first_input_shape(program)
        return LoadedModel(module, str(path), "in file", None, None, shape, "export")
    if _is_torchscript(path):
        try:
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
                return tuple(int(s) for s in value.shape)
    except Exception:
        return None
    return None


def _load_torchvision(name: str, weights: str, trust: bool, progress: ProgressFn | None) -> LoadedModel:
    import torchvision

    names = torchvision_classifiers()
    if name not in names:
        import difflib

        close = difflib.get_close_matches(name, names, n=5)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise ModelLoadError(
            f"Unknown model {name!r}.{hint} Use demo, a torchvision classification model "
            f"(e.g. resnet18, vit_b_16), file.py:Name, package.module:Name, or a .pt/.pt2 file."
        )
    enum = torchvision.models.get_model_weights(name)
    default = enum.DEFAULT
    labels = list(default.meta.get("categories") or []) or None
    prep = _torchvision_preprocess(default)
    notes = []
    if weights == "pretrained":
        pretrained.ensure_cached(default, progress)
        module = torchvision.models.get_model(name, weights=default)
        label = f"pretrained ({default})"
    else:
        module = torchvision.models.get_model(name, weights=None)
        label = "random"
        if weights not in ("random", "default"):
            state = read_checkpoint(weights, trust=trust)
            if isinstance(state, nn.Module):
                module = state
            else:
                apply_state_dict(module, state, Path(weights).name)
            label = str(weights)
        else:
            notes.append("Random weights: activations show structure, not learned features.")
    module.eval()
    return LoadedModel(module, name, label, labels, prep, prep.input_shape, "torchvision", notes)


def _torchvision_preprocess(weights) -> Preprocess:
    t = weights.transforms()
    crop = getattr(t, "crop_size", [224])[0]
    resize = getattr(t, "resize_size", [crop])[0]
    interpolation = str(getattr(t, "interpolation", "bilinear")).split(".")[-1].lower()
    return Preprocess(resize, crop, tuple(t.mean), tuple(t.std), interpolation)
