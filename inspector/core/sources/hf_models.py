"""`hf:PATH_OR_ID[#OUTPUT]` model sources: Hugging Face `transformers` image models, offline.

PATH is a folder written by `save_pretrained`; an ID (`google/vit-base-patch16-224`) is read from
the local Hugging Face cache only (never downloaded). The class is the one `config.json` names
(`architectures`); preprocessing comes from the folder's image-processor config, labels from
`config.id2label`. Weights are read from safetensors only, unless the user trusts the folder
(a `.bin` file is a pickle); a config that brings its own code (`auto_map`) loads only with
trust (`trust_remote_code`). Which sources carry code is decided in `trust`.

The model returns a `ModelOutput`; one forward hook at the root, added here, makes it return its
`logits` (the first output, e.g. `last_hidden_state`, for a model without logits; or the output
named after `#`, e.g. `hf:./dinov2#pooler_output`), so the engine, the
objective and every view see a tensor. transformers is imported only when an `hf:` source is asked for.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from ..common.errors import ModelLoadError, RunError, UntrustedCodeError
from ..storage.paths import check_name
from .preprocess import Preprocess
from ..records.tokens import TokenGrid
from .checkpoints import weights_into
from ..detection.targets import NOTE as DETECTION_NOTE
from .hf_detectors import EXAMPLE_INPUT, answer_as_detector, image_processor, is_query_detector
from .hf_hub import hf_folder, hf_needs_code, hf_spec, hub_cache
from .image_text import family_of, image_text
from .loaded import LoadedModel
from .weights import is_random, no_seed, pick, random_note, seeded

#: Classes in config.json's `architectures` that this app reads as (batch, classes, H, W) maps.
SEGMENTATION_SUFFIX = "ForSemanticSegmentation"
#: The input size assumed when neither the image-processor config nor config.json gives one.
DEFAULT_SIZE = 224
#: PIL's resampling numbers, as image-processor configs write them.
_RESAMPLE = {0: "nearest", 1: "lanczos", 2: "bilinear", 3: "bicubic", 4: "box", 5: "hamming"}


def resolve(source: str) -> tuple[Path, str | None]:
    """The model's folder (a local path, or the cached snapshot of a hub id) and the output asked for."""
    name, output = hf_spec(source)
    if not name:
        raise ModelLoadError("hf: needs a folder written by save_pretrained or a model id, e.g. "
                             "hf:./my-vit or hf:google/vit-base-patch16-224.")
    check_name(name, "The hf: folder", ModelLoadError)
    folder = hf_folder(name)
    if folder is not None:
        if not (folder / "config.json").is_file():
            raise ModelLoadError(f"{folder} has no config.json: it is not a folder written by save_pretrained.")
        return folder, output
    if Path(name).expanduser().exists() or name.startswith((".", "/", "~")) or name.count("/") > 1:
        raise ModelLoadError(f"hf:{name}: no such folder.")
    cache = hub_cache()
    raise ModelLoadError(
        f"hf:{name} is not in the local cache ({cache / ('models--' + name.replace('/', '--'))} is missing) and "
        f"this app never downloads. On a machine with network run `hf download {name}` (or "
        f"`huggingface-cli download {name}`) and copy that folder into {cache} (or set HF_HUB_CACHE to the "
        f"cache that holds it), or pass a folder written by save_pretrained.")


def load_source(source: str, weights: str | None, trust: bool, seed: int | None) -> LoadedModel:
    """`hf:`: the folder's own weights by default (`pretrained`), `random` from its config under a seed."""
    weights = "pretrained" if is_random(weights) and weights != "random" else weights
    if weights != "random":
        no_seed(seed, "the weights come from the folder" if weights == "pretrained" else f"the weights come from {weights}")
    return load(source, weights, trust, pick(seed) if weights == "random" else None)


def load(source: str, weights: str, trust: bool, seed: int | None):
    """A LoadedModel for `hf:...`: `weights` is `pretrained` (the folder's), `random` (from its config,
    seeded) or a weights file."""
    folder, output = resolve(source)
    config = _read_json(folder / "config.json")
    code = hf_needs_code(folder)
    if code and trust is not True:
        raise UntrustedCodeError(
            f"{source}: its config.json asks for code that comes with the model ({code}). Pass --trust (or "
            f"confirm in the app) only if you trust where it came from.")
    transformers = _transformers()
    cls = _model_class(transformers, config, code, source)
    notes = []
    if weights == "pretrained":
        _check_weight_files(folder, trust, source)
        try:
            module = cls.from_pretrained(str(folder), local_files_only=True, trust_remote_code=bool(code),
                                         use_safetensors=None if trust is True else True)
        except Exception as exc:
            raise ModelLoadError(f"Cannot load {source}: {type(exc).__name__}: {exc}") from exc
        label = "pretrained (folder)"
    else:
        hf_config = _config(transformers, folder, bool(code), source)
        try:
            with seeded(seed) if seed is not None else contextlib.nullcontext():
                module = cls.from_config(hf_config, trust_remote_code=True) if code else cls(hf_config)
        except Exception as exc:
            raise ModelLoadError(f"transformers could not build {source}: {type(exc).__name__}: {exc}") from exc
        if weights == "random":
            label = "random"
            notes.append(random_note(seed))
        else:
            module = weights_into(module, weights, trust)
            label = str(weights)
    module.eval()
    if is_query_detector(config):
        return _query_detector(module, folder, config, source, output, (label, notes, seed if weights == "random"
                                                                         else None), transformers)
    family = family_of(_architecture(config))
    if family is not None:  # CLIP, SigLIP: the image tower, its text tower behind text: targets
        module = image_text(module, family, folder, source, output, trust, transformers, notes)
    else:
        _return_tensor(module, output)
    prep = preprocess_from(folder, config)
    task = "segmentation" if str(_architecture(config)).endswith(SEGMENTATION_SUFFIX) else "classification"
    task = "image-text" if family is not None else task
    shape = prep.input_shape if prep is not None else _config_shape(config)
    if shape is None:
        channels = (config.get("vision_config") or config).get("num_channels", 3)
        shape = (1, channels, DEFAULT_SIZE, DEFAULT_SIZE)
        notes.append(f"Neither an image-processor config nor config.json gives an input size: "
                     f"{DEFAULT_SIZE}x{DEFAULT_SIZE} assumed.")
    if output:
        notes.append(f"The model's output is its {output!r}.")
    loaded = LoadedModel(module, source.strip(), label, labels_of(config), prep, shape, "hf", notes,
                         seed if weights == "random" else None, task)
    return loaded


def _query_detector(module, folder: Path, config: dict, source: str, output: str | None, made: tuple,
                    transformers) -> LoadedModel:
    """A DETR-family detector (hf_detectors): it answers with boxes, as torchvision's detectors do."""
    if output:
        raise ModelLoadError(f"{source}: a detector answers with its boxes; it takes no #{output}.")
    label, notes, seed = made
    processor, own = image_processor(transformers, folder, config["model_type"], source)
    notes = notes + answer_as_detector(module, processor, label == "random") + [DETECTION_NOTE]
    if not own:
        notes.append(f"{folder} has no preprocessor_config.json: {type(processor).__name__}'s defaults are used.")
    return LoadedModel(module, source.strip(), label, labels_of(config), Preprocess(), EXAMPLE_INPUT, "hf", notes,
                       seed, "detection")


def _transformers():
    import transformers
    from transformers.utils import logging

    logging.disable_progress_bar()  # "Loading weights" bars on stderr, in a desktop app and a CLI with its own
    return transformers


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelLoadError(f"Cannot read {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ModelLoadError(f"{path} is not a JSON object.")
    return data


def _architecture(config: dict) -> str | None:
    names = config.get("architectures") or []
    return names[0] if names and isinstance(names[0], str) else None


def _model_class(transformers, config: dict, code: str | None, source: str):
    """The class config.json names; with its own code, the Auto class its `auto_map` offers."""
    if code:
        auto = config.get("auto_map") or {}
        for key in ("AutoModelForImageClassification", "AutoModelForSemanticSegmentation", "AutoModel"):
            if key in auto:
                return getattr(transformers, key)
        raise ModelLoadError(f"{source}: its auto_map offers {', '.join(auto) or 'nothing'}, none of them an image "
                             f"model class this app reads (AutoModelForImageClassification, "
                             f"AutoModelForSemanticSegmentation, AutoModel).")
    name = _architecture(config)
    cls = getattr(transformers, name, None) if name else None
    if cls is None:
        kind = config.get("model_type", "?")
        raise ModelLoadError(f"{source}: transformers {transformers.__version__} has no class "
                             f"{name or '(config.json names none)'} (model_type {kind!r}).")
    return cls


def _config(transformers, folder: Path, code: bool, source: str):
    try:
        return transformers.AutoConfig.from_pretrained(str(folder), local_files_only=True, trust_remote_code=code)
    except Exception as exc:
        raise ModelLoadError(f"Cannot read the config of {source}: {type(exc).__name__}: {exc}") from exc


def _check_weight_files(folder: Path, trust: bool, source: str) -> None:
    if any(folder.glob("*.safetensors")):
        return
    pickles = sorted(p.name for p in folder.glob("*.bin")) + sorted(p.name for p in folder.glob("*.pt*"))
    if not pickles:
        raise ModelLoadError(f"{source}: {folder} holds no weights (no *.safetensors). Use --weights random to "
                             f"build it from its config.")
    if trust is not True:
        raise UntrustedCodeError(
            f"{source}: {folder} has its weights only as {', '.join(pickles)}, a pickle that can run code when "
            f"loaded. Pass --trust only if you trust where it came from, or convert the weights to safetensors.")


def _return_tensor(module, output: str | None) -> None:
    """Make the root return the tensor the engine reads: `logits`, or the named output."""
    def pick(_module, _args, result):
        if not isinstance(result, dict):  # ModelOutput is an OrderedDict
            return None
        name = output or ("logits" if "logits" in result else next(iter(result.keys()), None))
        if name not in result or result[name] is None:
            raise RunError(f"This model's output has no {name!r}; it has {', '.join(result.keys())}.")
        return result[name]
    module.register_forward_hook(pick)


def labels_of(config: dict) -> list[str] | None:
    """`id2label` in class order, when it names every class from 0 (not transformers' placeholder
    names `LABEL_0`, `LABEL_1`, ... of a config that was never given any)."""
    names = config.get("id2label") or {}
    try:
        ordered = sorted((int(k), str(v)) for k, v in names.items())
    except (TypeError, ValueError):
        return None
    if not ordered or [k for k, _ in ordered] != list(range(len(ordered))):
        return None
    if all(v == f"LABEL_{k}" for k, v in ordered):
        return None
    return [v for _, v in ordered]


def preprocess_from(folder: Path, config: dict) -> Preprocess | None:
    """The folder's image-processor config as a Preprocess (None when there is none)."""
    path = folder / "preprocessor_config.json"
    if not path.is_file():
        return None
    p = _read_json(path)
    interpolation = _RESAMPLE.get(p.get("resample", 2), "bilinear")
    mean = tuple(p.get("image_mean") or (0.0, 0.0, 0.0)) if p.get("do_normalize", True) else (0.0, 0.0, 0.0)
    std = tuple(p.get("image_std") or (1.0, 1.0, 1.0)) if p.get("do_normalize", True) else (1.0, 1.0, 1.0)
    size = p.get("size") if p.get("do_resize", True) else None
    resize = stretch = None
    if isinstance(size, int):
        size = {"shortest_edge": size}
    if isinstance(size, dict) and "height" in size and "width" in size:
        stretch = (int(size["height"]), int(size["width"]))
    elif isinstance(size, dict) and "shortest_edge" in size:
        resize = int(size["shortest_edge"])
        if p.get("crop_pct") and resize < 384:  # ConvNeXt: resize to edge / crop_pct, then crop to edge
            crop = resize
            return Preprocess(int(resize / float(p["crop_pct"])), crop, mean, std, interpolation)
    crop = None
    crop_size = p.get("crop_size") if p.get("do_center_crop") else None
    if isinstance(crop_size, int):
        crop = crop_size
    elif isinstance(crop_size, dict) and crop_size.get("height") == crop_size.get("width"):
        crop = int(crop_size["height"])
    return Preprocess(resize, crop, mean, std, interpolation, stretch)


def _config_shape(config: dict) -> tuple[int, ...] | None:
    vision = config.get("vision_config") or config
    size = vision.get("image_size")
    channels = vision.get("num_channels", 3)
    if isinstance(size, int):
        return (1, channels, size, size)
    if isinstance(size, (list, tuple)) and len(size) == 2:
        return (1, channels, int(size[0]), int(size[1]))
    return None


def token_grid(module, input_hw: tuple[int, int] | None):
    """The patch grid of a transformers ViT-family model (class, distillation and register tokens
    first) or Swin (no prefix, halved at each stage), from its config's patch size and the input
    size; None for models without one."""
    config = getattr(module, "config", None)
    vision = getattr(config, "vision_config", None) or config
    patch = getattr(vision, "patch_size", None)
    if isinstance(patch, (list, tuple)):
        patch = patch[0] if len(set(patch)) == 1 else None
    if not isinstance(patch, int) or patch <= 0:
        return None
    embeddings = next((m for name, m in module.named_modules() if name.endswith("embeddings")
                       and (hasattr(m, "patch_embeddings") or hasattr(m, "patch_embedding"))), None)
    if embeddings is None:
        return None
    if input_hw is None:
        size = getattr(vision, "image_size", None)
        input_hw = (size, size) if isinstance(size, int) else tuple(size or ())
    if len(input_hw) != 2:
        return None
    height, width = int(input_hw[0]) // patch, int(input_hw[1]) // patch
    if hasattr(embeddings, "cls_token") or hasattr(embeddings, "class_embedding"):  # ViT family
        prefix = 1 + int(getattr(embeddings, "distillation_token", None) is not None)
        registers = getattr(embeddings, "register_tokens", None)
        return TokenGrid(height, width, prefix + (int(registers.shape[1]) if registers is not None else 0))
    if getattr(vision, "model_type", "").startswith("siglip"):  # no class token: every token is a patch
        return TokenGrid(height, width, 0)
    depths = getattr(vision, "depths", None)
    if getattr(vision, "model_type", "").startswith("swin") and depths:  # token stages, halved by patch merging
        return TokenGrid(height, width, 0, len(depths))
    return None  # convolutional (ConvNeXt, ...): its maps are (B, C, H, W) already
