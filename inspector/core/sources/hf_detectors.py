"""Query-based detectors from `hf:` folders: DETR, Conditional DETR, Deformable DETR, RT-DETR (v1, v2) and D-FINE.

Such a model answers as torchvision's detectors do, so that every part of the engine that reads boxes (the
`box:` targets, the boxes drawn, Each box, D-RISE, the faithfulness curves) reads it unchanged: it takes the
image at its own size in [0, 1], resizes and normalises it as the folder's image processor does (the
processor's own `resize`: torchvision's, differentiable), and answers `[{"boxes", "scores", "labels"}]` per
image, made by the processor's own `post_process_object_detection` with the image's size (boxes in input
pixels) and the model's score threshold (`score_thresh`). Each detection is one query (and, for the families
that score every class with a sigmoid and keep the best query x class pairs, one class of it); its score keeps
the graph back to the input, so a box's score is the objective gradients start from.

Two hooks at the model's root do this (as `hf_models` makes other models answer with a tensor), so the layers
keep transformers' own paths (`model.decoder.layers.0.encoder_attn`).
"""

from __future__ import annotations

import inspect
from pathlib import Path

from ..common.errors import ModelLoadError

#: config.json's `model_type` -> the image processor its checkpoints use (transformers' torchvision one).
PROCESSORS = {"detr": "DetrImageProcessor", "conditional_detr": "ConditionalDetrImageProcessor",
              "deformable_detr": "DeformableDetrImageProcessor", "rt_detr": "RTDetrImageProcessor",
              "rt_detr_v2": "RTDetrImageProcessor", "d_fine": "RTDetrImageProcessor"}
#: Families whose post-processing keeps the best query x class pairs (at most `TOP_K`) rather than a query each.
PAIRS = {"conditional_detr", "deformable_detr"}
TOP_K = 100  # transformers' default for those families
#: The default input of such a model (the layer tree's one run): its processor resizes whatever it is given.
EXAMPLE_INPUT = (1, 3, 320, 320)


def is_query_detector(config: dict) -> bool:
    """config.json names one of these families' object-detection classes."""
    names = config.get("architectures") or []
    return (config.get("model_type") in PROCESSORS and bool(names) and isinstance(names[0], str)
            and names[0].endswith("ForObjectDetection"))


def most_detections(config) -> int:
    """The most detections the post-processing can keep for one image: a query each, or the best `TOP_K`
    query x class pairs."""
    if config.model_type in PAIRS:
        return min(TOP_K, int(config.num_queries) * int(config.num_labels))
    return int(config.num_queries)


def image_processor(transformers, folder: Path, model_type: str, source: str):
    """The folder's image processor (its preprocessor_config.json) as the family's torchvision processor, or
    that processor's defaults when the folder has none."""
    cls = getattr(transformers, PROCESSORS[model_type])
    if not (folder / "preprocessor_config.json").is_file():
        return cls(), False
    try:
        return cls.from_pretrained(str(folder), local_files_only=True), True
    except Exception as exc:
        raise ModelLoadError(f"Cannot read the image processor of {source}: {type(exc).__name__}: {exc}") from exc


def answer_as_detector(module, processor, random_weights: bool) -> list[str]:
    """Make `module` (a transformers `...ForObjectDetection`) take [0, 1] images and answer with detections
    (the module's docstring); its score threshold is the processor's default, 0 for random weights (their
    scores sit near chance). The notes to show."""
    post = processor.post_process_object_detection
    keyword = inspect.signature(post).parameters
    threshold = 0.0 if random_weights else float(keyword["threshold"].default)
    extra = {"use_focal_loss": bool(module.config.use_focal_loss)} if "use_focal_loss" in keyword else {}
    for part in module.modules():  # the pure-torch deformable attention, never a compiled kernel
        if hasattr(part, "disable_custom_kernels"):
            part.disable_custom_kernels = True
    module.score_thresh = threshold
    module.most_detections = most_detections(module.config)
    seen: dict[str, tuple[int, int]] = {}  # the input's size, from the call's start to its end

    def before(_module, args, kwargs):
        kwargs = dict(kwargs)
        x = args[0] if args else kwargs.pop("pixel_values")
        seen["hw"] = (int(x.shape[-2]), int(x.shape[-1]))
        return (_pixel_values(processor, x), *args[1:]), kwargs

    def after(part, _args, _kwargs, output):
        hw = seen.get("hw")
        if not hasattr(output, "pred_boxes") or hw is None:
            return None
        return post(output, threshold=part.score_thresh, target_sizes=[hw] * len(output.pred_boxes), **extra)

    module.register_forward_pre_hook(before, with_kwargs=True)
    module.register_forward_hook(after, with_kwargs=True)
    notes = ["The image is resized and normalised as the folder's image processor does, inside the model; each "
             "box is a query, scored as transformers' post_process_object_detection scores it."]
    if getattr(processor, "do_pad", False) and getattr(processor, "pad_size", None):
        notes.append(f"The image processor pads to {processor.pad_size}; here the image is not padded.")
    if random_weights:
        notes.append("Random weights score every class near chance: the score threshold is 0 here, so that the "
                     "top boxes show (--score-threshold sets it).")
    return notes


def _pixel_values(processor, x):
    """x (B, 3, H, W) in [0, 1] as the processor makes its pixel values: resized (its own resize), normalised."""
    if processor.do_resize:
        x = processor.resize(x, size=processor.size, resample=processor.resample)
    if processor.do_normalize:
        mean = x.new_tensor(processor.image_mean)[:, None, None]
        std = x.new_tensor(processor.image_std)[:, None, None]
        x = (x - mean) / std
    return x
