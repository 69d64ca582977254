"""torchvision classification and segmentation models by name: random (seeded), pretrained
through torchvision's cache, or a weights file."""

from __future__ import annotations

import difflib
from typing import Callable

from ..errors import ModelLoadError
from ..preprocess import Preprocess
from . import pretrained
from .checkpoints import weights_into
from .loaded import LoadedModel
from .weights import is_random, no_seed_unless_random, pick, random_note, seeded

ProgressFn = Callable[[int, int], None]


def torchvision_classifiers() -> list[str]:
    """Every torchvision classification model name (no weights needed to list them)."""
    import torchvision  # heavy (~1 s): imported when a torchvision model is asked for

    return sorted(torchvision.models.list_models(module=torchvision.models))


def torchvision_segmenters() -> list[str]:
    """Every torchvision semantic segmentation model name (deeplabv3_resnet50, fcn_resnet50, ...)."""
    import torchvision  # heavy: imported when a torchvision model is asked for

    return sorted(torchvision.models.list_models(module=torchvision.models.segmentation))


def load(name: str, weights: str, trust: bool, progress: ProgressFn | None,
                      seed: int | None) -> LoadedModel:
    import torchvision  # heavy: imported when a torchvision model is asked for

    segmenters = torchvision_segmenters()
    names = torchvision_classifiers() + segmenters
    if name not in names:
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
    prep = torchvision_preprocess(default)
    extra = builder_options(name, prep, name in segmenters)
    notes = []
    random_weights = is_random(weights)
    no_seed_unless_random(seed, weights)
    if weights == "pretrained":
        pretrained.ensure_cached(default, progress)
        module = torchvision.models.get_model(name, weights=default)
        label = f"pretrained ({default})"
    elif random_weights:
        seed = pick(seed)
        with seeded(seed):
            module = torchvision.models.get_model(name, weights=None, **extra)
        label = "random"
        notes.append(random_note(seed))
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


def builder_options(name: str, prep: Preprocess, segmenter: bool) -> dict:
    """What torchvision's builder needs besides `weights=None` to build the model the preprocessing
    feeds: segmentation builders fetch ImageNet backbone weights unless told not to; a ViT whose
    default weights take another input size (vit_h_14: 518) is built for that size."""
    if segmenter:
        return {"weights_backbone": None}
    if name.startswith("vit_") and prep.crop and prep.crop != 224:
        return {"image_size": prep.crop}
    return {}


def torchvision_preprocess(weights) -> Preprocess:
    t = weights.transforms()
    crop = (getattr(t, "crop_size", None) or [None])[0]  # segmentation transforms resize only
    resize = (getattr(t, "resize_size", None) or [crop])[0]
    interpolation = str(getattr(t, "interpolation", "bilinear")).split(".")[-1].lower()
    return Preprocess(resize, crop, tuple(t.mean), tuple(t.std), interpolation)
