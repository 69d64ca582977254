"""torchvision classification, segmentation and detection models by name: random (seeded), pretrained
through torchvision's cache, or a weights file."""

from __future__ import annotations

import difflib
from typing import Callable

from ..detection.targets import NOTE as DETECTION_NOTE
from ..detection.thresholds import set_score_threshold
from ..common.errors import ModelLoadError
from .preprocess import Preprocess
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


def torchvision_detectors() -> list[str]:
    """Every torchvision detection model name (fasterrcnn_resnet50_fpn, retinanet_resnet50_fpn, ...)."""
    import torchvision  # heavy: imported when a torchvision model is asked for

    return sorted(torchvision.models.list_models(module=torchvision.models.detection))


def torchvision_names() -> list[str]:
    """Every torchvision model this loads: classifiers, then segmenters, then detectors."""
    return torchvision_classifiers() + torchvision_segmenters() + torchvision_detectors()


#: A detector's default input (the layer tree's one run): its own transform resizes whatever it is given.
DETECTION_INPUT = (1, 3, 320, 320)


def load(name: str, weights: str, trust: bool, progress: ProgressFn | None,
                      seed: int | None) -> LoadedModel:
    import torchvision  # heavy: imported when a torchvision model is asked for

    segmenters, detectors, names = torchvision_segmenters(), torchvision_detectors(), torchvision_names()
    if name not in names:
        close = difflib.get_close_matches(name, names, n=5)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise ModelLoadError(
            f"Unknown model {name!r}.{hint} Use demo, demo-detector, a torchvision classification, segmentation "
            f"or detection model (e.g. resnet18, vit_b_16, deeplabv3_resnet50, fasterrcnn_resnet50_fpn), "
            f"timm:NAME, file.py:Name, package.module:Name, or a .pt/.pt2 file."
        )
    enum = torchvision.models.get_model_weights(name)
    default = enum.DEFAULT
    labels = list(default.meta.get("categories") or []) or None
    detector = name in detectors
    prep = Preprocess() if detector else torchvision_preprocess(default)  # a detector resizes and normalises
    extra = builder_options(name, prep, name in segmenters or detector)
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
    task = "detection" if detector else "segmentation" if name in segmenters else "classification"
    if name in segmenters:
        notes.append("Segmentation: targets seg:CLASS or seg:CLASS@X0,Y0,X1,Y1 (input pixels); predictions "
                     "give each class's share of the pixels.")
    if detector:
        shape = DETECTION_INPUT
        notes.append(DETECTION_NOTE)
        if random_weights:
            set_score_threshold(module, 0.0)
            notes.append("Random weights score every class near chance, under the model's score threshold: it is "
                         "0 here, so that its top boxes show (--score-threshold sets it).")
    return LoadedModel(module, name, label, labels, prep, shape, "torchvision", notes,
                       seed if random_weights else None, task)



def builder_options(name: str, prep: Preprocess, segmenter: bool) -> dict:
    """What torchvision's builder needs besides `weights=None` to build the model the preprocessing
    feeds: segmentation and detection builders (`segmenter`) fetch ImageNet backbone weights unless
    told not to; a ViT whose
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
