"""`timm:NAME` model sources: any timm model, random (seeded), pretrained from the local cache, or a file.

Preprocessing comes from timm's data config for the model, labels from the ImageNet subset its
pretrained tag names (ImageNet-1k names for a 1000-class head otherwise). Pretrained weights are
never downloaded here: they are read from the Hugging Face cache that `huggingface-cli download`
(or timm on a machine with network) fills; a missing file gives a message naming the folder.
timm is imported only when a `timm:` source is asked for.
"""

from __future__ import annotations

import contextlib
import difflib
from pathlib import Path

from ..common.errors import ModelLoadError
from .preprocess import Preprocess
from .checkpoints import weights_into
from .hf_hub import hub_cache
from .loaded import LoadedModel
from .refs import TIMM_PREFIX as PREFIX
from .weights import is_random, no_seed_unless_random, pick, random_note, seeded

#: Weight files timm's Hugging Face repos hold, in the order they are preferred.
HUB_FILES = ("model.safetensors", "pytorch_model.bin")


def check_name(name: str) -> str:
    """`name` (an architecture, optionally `.tag`) if timm knows it; ModelLoadError with close names otherwise."""
    import timm

    arch, _tag = timm.models.split_model_name_tag(name)
    if name and timm.is_model(arch):
        return name
    close = difflib.get_close_matches(name, timm.list_models(), n=5)
    hint = f" Did you mean {', '.join(PREFIX + c for c in close)}?" if close else ""
    raise ModelLoadError(f"timm has no model {name!r}.{hint} `timm.list_models()` lists them all.")


def catalogue() -> list[str]:
    """Every timm architecture as a source, `timm:NAME`."""
    import timm

    return [PREFIX + name for name in timm.list_models()]


def cached_weights(name: str) -> Path:
    """The pretrained weight file of timm model `name` in the local Hugging Face cache."""
    from huggingface_hub import try_to_load_from_cache
    from timm.models import get_pretrained_cfg

    cfg = get_pretrained_cfg(name)
    hub_id = getattr(cfg, "hf_hub_id", None) if cfg is not None else None
    if not hub_id:
        raise ModelLoadError(f"timm:{name} has no pretrained weights on the Hugging Face hub that this app can "
                             f"read offline. Pass a weights file with --weights PATH.")
    cache = hub_cache()
    for filename in HUB_FILES:
        found = try_to_load_from_cache(hub_id, filename, cache_dir=str(cache))
        if isinstance(found, str):
            return Path(found)
    raise ModelLoadError(
        f"The pretrained weights of timm:{name} are not in the local cache: no "
        f"{cache / ('models--' + hub_id.replace('/', '--'))}. On a machine with network run "
        f"`huggingface-cli download {hub_id} {HUB_FILES[0]}` and copy that folder into {cache} (or set "
        f"HF_HUB_CACHE to the cache that holds it), or pass a weights file with --weights PATH.")


def create(name: str, weights: str, seed: int | None = None):
    """The timm module for `name`: random weights under `seed`, or the cached pretrained ones."""
    import timm

    if weights == "pretrained":
        path = cached_weights(name)
        try:
            return timm.create_model(name, pretrained=True, pretrained_cfg_overlay={"file": str(path), "source": ""})
        except Exception as exc:
            raise ModelLoadError(f"Cannot load the cached weights {path} into timm:{name}: "
                                 f"{type(exc).__name__}: {exc}") from exc
    try:
        with seeded(seed) if seed is not None else contextlib.nullcontext():
            return timm.create_model(name, pretrained=False)
    except Exception as exc:
        raise ModelLoadError(f"timm could not build {name}: {type(exc).__name__}: {exc}") from exc


def preprocess_of(module) -> tuple[Preprocess, tuple[int, ...]]:
    """Preprocessing from timm's data config, and the default input shape (batch 1)."""
    from timm.data import resolve_data_config

    config = resolve_data_config({}, model=module)
    channels, height, width = config["input_size"]
    crop_pct = float(config.get("crop_pct") or 1.0)
    square = height == width
    resize = int(height / crop_pct) if square else None  # timm: floor(size / crop_pct), short side
    crop = height if square else None
    prep = Preprocess(resize, crop, tuple(config["mean"]), tuple(config["std"]), str(config["interpolation"]))
    return prep, (1, channels, height, width)


def labels_of(module) -> list[str] | None:
    """Class names for the model's head: its pretrained tag's ImageNet subset, or ImageNet-1k for 1000 classes."""
    from timm.data import ImageNetInfo, infer_imagenet_subset

    classes = getattr(module, "num_classes", None)
    subset = infer_imagenet_subset(module) or ("imagenet-1k" if classes == 1000 else None)
    if subset is None:
        return None
    try:
        names = [d.split(",")[0].strip() for d in ImageNetInfo(subset).label_descriptions()]
    except Exception:  # noqa: BLE001 - labels are a nicety, never a reason not to load
        return None
    return names if classes is None or len(names) == classes else None


def load(name: str, weights: str, trust: bool, seed: int | None) -> LoadedModel:
    """A LoadedModel for `timm:NAME`: `weights` is `random` (seeded), `pretrained` (the local cache) or a file."""
    name = check_name(name.strip())
    random_weights = is_random(weights)
    no_seed_unless_random(seed, weights)
    seed = pick(seed) if random_weights else None
    module = create(name, "pretrained" if weights == "pretrained" else "random", seed)
    notes = []
    if weights == "pretrained":
        label = "pretrained (local cache)"
    elif random_weights:
        label = "random"
        notes.append(random_note(seed))
    else:
        module = weights_into(module, weights, trust)  # or a whole pickled model (only with trust)
        label = str(weights)
    prep, shape = preprocess_of(module)
    module.eval()
    return LoadedModel(module, PREFIX + name, label, labels_of(module), prep, shape, "timm", notes, seed)
