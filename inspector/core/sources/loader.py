"""Model sources -> a loaded model with its preprocessing and labels: `load_model`.

Sources: `demo`, `demo-detector` and `demo-shuffled`; a torchvision classification, segmentation or detection name
(`resnet18`); `timm:NAME` (any timm model, `timm_models`); `hf:PATH_OR_ID` (`hf_models`); `file.py:Name` or
`package.module:Name` (runs that code); a TorchScript file or a `torch.export` `.pt2` program (both may carry code, so
they need `trust=True`). `refs.parse_source` says which family a source is, in one place, and
this module dispatches from a table of loaders, one module per family.

Random weights are reproducible: a torchvision model with random weights and a Python
factory are built under a seed (given, or picked and recorded in `LoadedModel.seed`), with
the caller's random number generators left as they were.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..common.arguments import need_flag, need_path
from ..common.errors import ModelLoadError
from . import demo, hf_models, programs, python_factory, timm_models, torchvision_models
from .loaded import LoadedModel
from .refs import DEFAULT_WEIGHTS, SourceRef, parse_source, weights_shown  # noqa: F401 - said here too
from .seeds import check_seed
from .weights import apply_weights_file, is_random, no_seed, pick

ProgressFn = Callable[[int, int], None]


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
    trust = need_flag(trust, "trust")
    source = need_path(source, "The model source").strip()
    if weights is not None:
        weights = need_path(weights, "weights")
    seed = check_seed(seed)
    if not source:
        raise ModelLoadError("No model given. Use demo, a torchvision name like resnet18, file.py:Name or a file.")
    ref = parse_source(source)
    return LOADERS[ref.kind](ref, weights, trust, progress, seed)


def _demo(ref: SourceRef, weights, trust, progress, seed) -> LoadedModel:
    no_seed(seed, f"the {ref.text} model has its bundled weights")
    return _with_weights(demo.load(ref.text), weights, trust)


def _factory(ref: SourceRef, weights, trust, progress, seed) -> LoadedModel:
    if not is_random(weights):
        no_seed(seed, f"the weights come from {weights}")
    return _with_weights(python_factory.load(ref.text, pick(seed) if is_random(weights) else None), weights, trust)


def _program(ref: SourceRef, weights, trust, progress, seed) -> LoadedModel:
    no_seed(seed, f"{Path(ref.text).name} holds its own weights")
    return _with_weights(programs.load(Path(ref.text), trust), weights, trust)


def _with_weights(loaded: LoadedModel, weights: str | None, trust: bool) -> LoadedModel:
    if not is_random(weights):
        apply_weights_file(loaded, weights, trust)
    loaded.module.eval()
    return loaded


def _timm(ref: SourceRef, weights, trust, progress, seed) -> LoadedModel:
    return timm_models.load(ref.name, weights or "random", trust, seed)


def _hf(ref: SourceRef, weights, trust, progress, seed) -> LoadedModel:
    return hf_models.load_source(ref.text, weights, trust, seed)


def _torchvision(ref: SourceRef, weights, trust, progress, seed) -> LoadedModel:
    return torchvision_models.load(ref.text, weights or "random", trust, progress, seed)


#: One loader per family of source (`SourceRef.kind`).
LOADERS = {"demo": _demo, "timm": _timm, "hf": _hf, "factory": _factory, "program": _program,
           "torchvision": _torchvision}
