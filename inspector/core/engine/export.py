"""Files written from results: `.npz` with a JSON manifest beside it, and heat-map overlays."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..common.errors import SpecError, WriteError
from ..records.manifest import run_manifest
from ..records.signs import picture_of
from .result import RunResult
from ..sources.seeds import check_seed
from ..storage.versions import versions
from ..storage.writes import save_image, save_npz, write_text


def npz_path(path: str | Path) -> Path:
    """The path numpy really writes: `.npz` is appended when missing."""
    path = Path(path)
    return path if path.suffix == ".npz" else path.with_name(path.name + ".npz")


def export_npz(result: RunResult, path: str | Path, manifest: dict | None = None) -> tuple[Path, Path]:
    """Write every array under its key to `path` (.npz) and a manifest to `path.with_suffix('.json')`.

    `manifest` adds what the result does not know (model source, weights, the seed of random
    weights, input); its entries win over the ones read from the result. A seed in it must be
    a whole number from 0 to 2**32-1 (or None)."""
    if manifest and "seed" in manifest:
        manifest = {**manifest, "seed": check_seed(manifest["seed"], "The manifest's seed")}
    path = npz_path(path)
    arrays = result.arrays()
    info = {
        **run_manifest(),
        "device": result.device, "target": result.target, "target_index": result.target_index,
        "objective": result.objective, "edits": list(result.edits),
        **(manifest or {}),
        "versions": versions(),
        "keys": {key: list(array.shape) for key, array in arrays.items()},
    }
    sidecar = path.with_suffix(".json")
    text = json.dumps(json_ready(info), indent=1, default=str, allow_nan=False) + "\n"
    existed = path.exists()
    save_npz(path, arrays)
    try:
        write_text(sidecar, text)
    except WriteError:
        if not existed:  # the pair is written whole or not at all
            path.unlink(missing_ok=True)
        raise
    return path, sidecar


def picture_suffixes() -> tuple[str, ...]:
    """File endings Pillow can write a picture as, lower case, the common ones first (.png, .jpg, ...)."""
    from PIL import Image

    Image.init()
    found = {ext for ext, fmt in Image.registered_extensions().items() if fmt in Image.SAVE}
    common = [ext for ext in (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp") if ext in found]
    return (*common, *sorted(found - set(common)))


def check_picture_path(path: Path) -> Path:
    """`path` when Pillow can write a picture under its ending (a 1x1 picture is written to memory first:
    some endings are registered by stubs that need a handler installed); a SpecError otherwise."""
    import io

    from PIL import Image

    Image.init()
    fmt = Image.registered_extensions().get(path.suffix.lower())
    try:
        Image.new("RGB", (1, 1)).save(io.BytesIO(), format=fmt)
    except (ValueError, KeyError, OSError) as exc:
        raise SpecError(f"Cannot write a picture as {path.name!r} ({exc}); use .png, .jpg or .npy.") from None
    return path


def json_text(value, **dump) -> str:
    """`value` as valid JSON: NaN and infinities as strings (`json_ready`), never bare NaN."""
    return json.dumps(json_ready(value), allow_nan=False, **dump)


def json_ready(value):
    """`value` with every NaN and infinity written as the string "NaN", "Infinity" or "-Infinity"
    (JSON has no such numbers), so `json.dumps(..., allow_nan=False)` always gives valid JSON."""
    if isinstance(value, float) and not np.isfinite(value):
        return "NaN" if np.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, np.floating):
        return json_ready(float(value))
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    return value


def load_npz(path: str | Path) -> tuple[dict[str, np.ndarray], dict]:
    """Arrays by key and the manifest (empty when there is none)."""
    path = npz_path(path)
    with np.load(path, allow_pickle=False) as data:
        arrays = {key: data[key] for key in data.files}
    sidecar = path.with_suffix(".json")
    manifest = json.loads(sidecar.read_text(encoding="utf-8")) if sidecar.is_file() else {}
    return arrays, manifest


def jet(values: np.ndarray) -> np.ndarray:
    """A 'jet'-like colour map: values in [0, 1] -> uint8 RGB (blue, cyan, yellow, red)."""
    v = np.clip(np.nan_to_num(np.asarray(values, dtype=np.float32)), 0, 1)[..., None]
    centres = np.array([3.0, 2.0, 1.0], dtype=np.float32)  # r, g, b
    rgb = np.clip(1.5 - np.abs(4 * v - centres), 0, 1)
    return (rgb * 255 + 0.5).astype(np.uint8)


def heat_values(attribution_map: np.ndarray, sign: str = "absolute") -> np.ndarray:
    """The map's picture under `sign` (records.signs) scaled for colours: [0, 1] from its smallest to its
    largest value, or for `signed` [-1, 1] by its largest |value| (0 stays 0)."""
    try:
        m = picture_of(attribution_map, sign).astype(np.float64)
    except ValueError:
        raise SpecError(f"A heat-map picture needs an image-shaped map, (H, W) or (C, H, W), not "
                        f"{np.shape(attribution_map)}; save .npy.") from None
    if sign == "signed":
        top = np.abs(m).max()
        return m / top if top > 0 else m
    lo, hi = m.min(), m.max()
    return (m - lo) / (hi - lo) if hi > lo else np.zeros_like(m)


def diverging(values: np.ndarray) -> np.ndarray:
    """A diverging colour map: values in [-1, 1] -> uint8 RGB, blue below 0, white at 0, red above."""
    v = np.clip(np.nan_to_num(np.asarray(values, dtype=np.float32)), -1, 1)[..., None]
    blue, white, red = (np.array(c, np.float32) for c in ((0, 40, 200), (255, 255, 255), (200, 0, 0)))
    rgb = np.where(v < 0, white + (blue - white) * -v, white + (red - white) * v)
    return (rgb + 0.5).astype(np.uint8)


def picture(x: np.ndarray, preprocess=None) -> np.ndarray:
    """The input as the model sees it, H x W x 3 uint8: the model's own inverse preprocessing,
    else each image min-max scaled (one channel shown as grey)."""
    if preprocess is not None and x.ndim == 4 and x.shape[1] == 3:
        return preprocess.to_display(x)
    a = np.asarray(x[0] if x.ndim == 4 else x, dtype=np.float64)
    a = a[:3] if a.shape[0] >= 3 else np.repeat(a[:1], 3, axis=0)
    lo, hi = np.nanmin(a), np.nanmax(a)
    a = (a - lo) / (hi - lo) if hi > lo else np.zeros_like(a)
    return (np.transpose(a, (1, 2, 0)) * 255 + 0.5).astype(np.uint8)


def overlay(image: np.ndarray, attribution_map: np.ndarray, opacity: float = 0.5,
            sign: str = "absolute") -> np.ndarray:
    """Blend the colour-mapped picture of the attribution under `sign` over an H x W x 3 uint8 picture: a
    signed one on a diverging map, each pixel as opaque as its |value| (0 leaves the picture clear)."""
    values = heat_values(attribution_map, sign)
    if values.shape[:2] != image.shape[:2]:
        raise SpecError(f"The map {values.shape[:2]} and the picture {image.shape[:2]} differ in size.")
    if sign == "signed":
        heat, alpha = diverging(values).astype(np.float32), opacity * np.abs(values)[..., None]
    else:
        heat, alpha = jet(values).astype(np.float32), opacity
    blended = (1 - alpha) * image.astype(np.float32) + alpha * heat
    return np.clip(blended + 0.5, 0, 255).astype(np.uint8)


SHORT_SIDE = 256  # a picture written of a map (attribute --out x.png) is at least this many pixels on its short side
LONG_SIDE = 16384  # and at most this many on its long side


def picture_scale(shape: tuple[int, ...], scale: int | None = None) -> int:
    """How many pixels a side each map pixel is in a picture of a map of `shape` (H, W, ...): `scale` as asked,
    else the least whole number that makes the short side SHORT_SIDE or more (1 for a map that large); a map
    of 64 x 64 is drawn 256 x 256, each value a 4 x 4 block (nearest neighbour: no value is made up). A scale
    that makes the long side more than LONG_SIDE pixels is a SpecError."""
    if scale is None:
        scale = max(1, -(-SHORT_SIDE // max(1, min(shape[:2]))))
    elif isinstance(scale, bool) or not isinstance(scale, int) or scale < 1:
        raise SpecError(f"The picture's scale is a whole number of pixels per map pixel, at least 1, not {scale!r}.")
    if max(shape[:2]) * scale > LONG_SIDE:
        raise SpecError(f"A scale of {scale} makes the {shape[0]} x {shape[1]} map a picture of "
                        f"{shape[0] * scale} x {shape[1] * scale} pixels; at most {LONG_SIDE} a side.")
    return scale


def enlarged(picture: np.ndarray, scale: int) -> np.ndarray:
    """`picture` (H, W, ...) with each pixel a block of scale x scale (nearest neighbour)."""
    return picture if scale == 1 else np.repeat(np.repeat(picture, scale, axis=0), scale, axis=1)


def save_overlay(path: str | Path, image: np.ndarray, attribution_map: np.ndarray, opacity: float = 0.5,
                 detections=None, chosen: int | None = None, sign: str = "absolute", scale: int | None = None) -> Path:
    """Write the overlay as an image file (format from the suffix, e.g. .png), each map pixel a block of
    `picture_scale(map's shape, scale)` pixels a side (None: at least SHORT_SIDE on the short side); with a
    detector's `detections`, the `chosen` one's box (the detection explained) drawn over it at that size."""
    from PIL import Image

    path = check_picture_path(Path(path))
    picture = overlay(image, attribution_map, opacity, sign)
    scale = picture_scale(picture.shape, scale)
    if detections is not None and chosen is not None:
        from ..detection.picture import draw_detections

        # no score reaches 2: the chosen box alone, drawn on the picture enlarged (nearest neighbour)
        picture = draw_detections(picture, detections, 2.0, chosen, max(picture.shape[:2]) * scale)
    else:
        picture = enlarged(picture, scale)
    save_image(path, Image.fromarray(picture, "RGB"))
    return path
