"""Model sources -> a loaded model with its preprocessing and labels.

Sources: `demo`; a torchvision classification name (`resnet18`); `timm:NAME` (any timm
model, see `inspector.core.timm_models`); `file.py:Name` or
`package.module:Name` (runs that code); a TorchScript file or a `torch.export` `.pt2`
program (both may carry code, so they need `trust=True`). Which sources carry code is
decided in one place, `inspector.core.sources`.

Random weights are reproducible: a torchvision model with random weights and a Python
factory are built under a seed (given, or picked and recorded in `LoadedModel.seed`), with
the caller's random number generators left as they were.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import torch
from torch import nn

from .checkpoints import read_checkpoint, weights_into
from .layers import LayerTree, build_layer_tree
from .sharing import Sharing
from .errors import ModelLoadError, SpecError, UntrustedCodeError
from .preprocess import Preprocess
from .seeds import check_seed, new_seed, seeded
from .sources import is_factory, is_model_file
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
    seed: int | None = None  # the seed the random weights were made with (None: not random or not seeded)
    task: str = "classification"  # or "segmentation" (a (batch, classes, H, W) output)

    def example_input(self) -> torch.Tensor | None:
        """A zero tensor of the default input shape, for the layer tree's one small run."""
        return torch.zeros(self.input_shape) if self.input_shape else None

    @property
    def device(self) -> torch.device:
        return next((p.device for p in self.module.parameters()), torch.device("cpu"))


def tree_of(model: LoadedModel) -> LayerTree:
    """The layer tree kept with a `LoadedModel`, built with one run at its default input when it has
    one (so `all` leaves out leaves that never run); made on first use, afresh for a replaced module."""
    kept = model.__dict__.get("_tree")
    if kept is None or kept[0] is not model.module:
        example = model.example_input()
        example = example.to(model.device) if example is not None else None
        kept = model.__dict__["_tree"] = (model.module, build_layer_tree(model.module, example))
    return kept[1]


def sharing_of(model: LoadedModel) -> Sharing:
    """The `Sharing` kept with a `LoadedModel` (made on first use; a replaced module starts afresh)."""
    kept = model.__dict__.get("_sharing")
    if kept is None or kept[0] is not model.module:
        kept = model.__dict__["_sharing"] = (model.module, Sharing())
    return kept[1]


def torchvision_classifiers() -> list[str]:
    """Every torchvision classification model name (no weights needed to list them)."""
    import torchvision

    return sorted(torchvision.models.list_models(module=torchvision.models))


def torchvision_segmenters() -> list[str]:
    """Every torchvision semantic segmentation model name (deeplabv3_resnet50, fcn_resnet50, ...)."""
    import torchvision

    return sorted(torchvision.models.list_models(module=torchvision.models.segmentation))


def load_model(
    source: str,
    weights: str | None = None,
    trust: bool = False,
    progress: ProgressFn | None = None,
    seed: int | None = None,
) -> LoadedModel:
    """Load a model from `source`; `weights` is random, pretrained or a checkpoint path.

    `seed` makes random weights reproducible: a torchvision model with random weights and a
    Python factory are built under it (the same seed gives bit-identical weights). With None a
    seed is picked and recorded in `LoadedModel.seed`. A seed with weights that are not random
    (pretrained, a checkpoint, the demo's, a saved program's) raises SpecError."""
    from .arguments import need_path

    source = need_path(source, "The model source").strip()
    if weights is not None:
        weights = need_path(weights, "weights")
    seed = check_seed(seed)
    if not source:
        raise ModelLoadError("No model given. Use demo, a torchvision name like resnet18, file.py:Name or a file.")
    random_weights = weights in (None, "", "random", "default")
    if source == "demo":
        _no_seed(seed, "the demo model has its bundled weights")
        loaded = _load_demo()
    elif source.lower().startswith("timm:"):
        return _load_timm(source, weights or "random", trust, seed)
    elif source.lower().startswith("hf:"):
        return _load_hf(source, weights, trust, seed)
    elif is_factory(source):
        if not random_weights:
            _no_seed(seed, f"the weights come from {weights}")
        loaded = _load_factory(source, _pick(seed) if random_weights else None)
    elif is_model_file(source):
        _no_seed(seed, f"{Path(source).name} holds its own weights")
        loaded = _load_program(Path(source), trust)
    else:
        return _load_torchvision(source, weights or "random", trust, progress, seed)
    if not random_weights:
        _apply_weights_file(loaded, weights, trust)
    loaded.module.eval()
    return loaded


def _pick(seed: int | None) -> int:
    return new_seed() if seed is None else seed


def _no_seed(seed: int | None, why: str) -> None:
    if seed is not None:
        raise SpecError(f"A seed is for random weights; {why}. Leave the seed out.")


def _apply_weights_file(loaded: LoadedModel, weights: str, trust: bool) -> None:
    if weights == "pretrained":
        raise ModelLoadError(f"--weights pretrained is for torchvision models; {loaded.source} has none.")
    module = weights_into(loaded.module, weights, trust)
    if module is not loaded.module:
        loaded.module = module
        loaded.notes.append(f"Whole model loaded from trusted pickle {weights}.")
    loaded.weights = str(weights)


def _load_demo() -> LoadedModel:
    from inspector.demo.model import load_demo

    bundle = load_demo()
    size = bundle.input_size
    prep = Preprocess(resize=size, crop=size, mean=tuple(bundle.mean), std=tuple(bundle.std))
    return LoadedModel(bundle.model, "demo", "bundled", list(bundle.labels), prep, (1, 3, size, size), "demo")


def _load_factory(source: str, seed: int | None) -> LoadedModel:
    target, name = source.rsplit(":", 1)
    if target.lower().endswith(".py"):
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


def _load_program(path: Path, trust: bool) -> LoadedModel:
    if not path.is_file():
        raise ModelLoadError(f"Model file not found: {path}")
    if not trust:
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


def _load_torchvision(name: str, weights: str, trust: bool, progress: ProgressFn | None,
                      seed: int | None) -> LoadedModel:
    import torchvision

    segmenters = torchvision_segmenters()
    names = torchvision_classifiers() + segmenters
    if name not in names:
        import difflib

        close = difflib.get_close_matches(name, names, n=5)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise ModelLoadError(
            f"Unknown model {name!r}.{hint} Use demo, a torchvision classification or segmentation model "
            f"(e.g. resnet18, vit_b_16, deeplabv3_resnet50), timm:NAME, file.py:Name, package.module:Name, "
            f"or a .pt/.pt2 file."
        )
    enum = torchvision.models.get_model_weights(name)
    default = enum.DEFAULT
    labels = list(default.meta.get("categories") or []) or None
    prep = _torchvision_preprocess(default)
    extra = builder_options(name, prep, name in segmenters)
    notes = []
    random_weights = weights in ("random", "default")
    if not random_weights:
        _no_seed(seed, "pretrained weights are not random" if weights == "pretrained"
                 else f"the weights come from {weights}")
    if weights == "pretrained":
        pretrained.ensure_cached(default, progress)
        module = torchvision.models.get_model(name, weights=default)
        label = f"pretrained ({default})"
    elif random_weights:
        seed = _pick(seed)
        with seeded(seed):
            module = torchvision.models.get_model(name, weights=None, **extra)
        label = "random"
        notes.append(f"Random weights (seed {seed}): activations show structure, not learned features.")
    else:
        module = weights_into(torchvision.models.get_model(name, weights=None, **extra), weights, trust)
        label = str(weights)
    module.eval()
    shape = prep.input_shape or (1, 3, prep.resize, prep.resize)  # segmentation: resized, not cropped
    if name in segmenters:
        notes.append("Segmentation: targets seg:CLASS or seg:CLASS@X0,Y0,X1,Y1 (input pixels); predictions "
                     "give each class's share of the pixels.")
    return LoadedModel(module, name, label, labels, prep, shape, "torchvision", notes,
                       seed if random_weights else None, "segmentation" if name in segmenters else "classification")


def _load_timm(source: str, weights: str, trust: bool, seed: int | None) -> LoadedModel:
    from . import timm_models

    name = timm_models.check_name(source.split(":", 1)[1].strip())
    random_weights = weights in ("random", "default")
    if not random_weights:
        _no_seed(seed, "pretrained weights are not random" if weights == "pretrained"
                 else f"the weights come from {weights}")
    seed = _pick(seed) if random_weights else None
    module = timm_models.create(name, "pretrained" if weights == "pretrained" else "random", seed)
    notes = []
    if weights == "pretrained":
        label = "pretrained (local cache)"
    elif random_weights:
        label = "random"
        notes.append(f"Random weights (seed {seed}): activations show structure, not learned features.")
    else:
        module = weights_into(module, weights, trust)  # or a whole pickled model (only with trust)
        label = str(weights)
    prep, shape = timm_models.preprocess_of(module)
    module.eval()
    return LoadedModel(module, f"timm:{name}", label, timm_models.labels_of(module), prep, shape, "timm", notes, seed)


def _load_hf(source: str, weights: str | None, trust: bool, seed: int | None) -> LoadedModel:
    """`hf:`: the folder's own weights by default (`pretrained`), `random` from its config under a seed."""
    from . import hf_models

    weights = "pretrained" if weights in (None, "", "default") else weights
    if weights != "random":
        _no_seed(seed, "the weights come from the folder" if weights == "pretrained" else f"the weights come from {weights}")
    return hf_models.load(source, weights, trust, _pick(seed) if weights == "random" else None)


def builder_options(name: str, prep: Preprocess, segmenter: bool) -> dict:
    """What torchvision's builder needs besides `weights=None` to build the model the preprocessing
    feeds: segmentation builders fetch ImageNet backbone weights unless told not to; a ViT whose
    default weights take another input size (vit_h_14: 518) is built for that size."""
    if segmenter:
        return {"weights_backbone": None}
    if name.startswith("vit_") and prep.crop and prep.crop != 224:
        return {"image_size": prep.crop}
    return {}


def _torchvision_preprocess(weights) -> Preprocess:
    t = weights.transforms()
    crop = (getattr(t, "crop_size", None) or [None])[0]  # segmentation transforms resize only
    resize = (getattr(t, "resize_size", None) or [crop])[0]
    interpolation = str(getattr(t, "interpolation", "bilinear")).split(".")[-1].lower()
    return Preprocess(resize, crop, tuple(t.mean), tuple(t.std), interpolation)
