"""An atlas folder, the one place that knows its layout: what each file is called, reading and
writing them (JSON written atomically), the saved state of an unfinished job.

    OUT_DIR/atlas.json                          the atlas (read_atlas)
    OUT_DIR/atlas.job.json                      the job the folder belongs to: key and arguments
    OUT_DIR/atlas.partial.npz + .json           the state of an unfinished job (Checkpoint)
    OUT_DIR/thumbnails/LAYER/CHANNEL_RANK.png   the crop around a top entry's argmax (thumbnail_path)
    OUT_DIR/thumbnails/regions.json             each layer's geometry (regions_path)
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .. import writes
from ..errors import AtlasError
from ..writes import save_npz
from .topk import LayerTop

ATLAS_FILE = "atlas.json"
JOB_FILE = "atlas.job.json"
PARTIAL = "atlas.partial"
THUMBS_DIR = "thumbnails"
THUMB_NAME = "{channel}_{rank}.png"  # in OUT_DIR/thumbnails/LAYER/
REGIONS_FILE = "regions.json"  # in OUT_DIR/thumbnails/


def read_atlas(out_dir) -> dict:
    """The atlas.json in `out_dir` (or the file itself), checked to be an atlas; AtlasError otherwise."""
    path = Path(out_dir)
    if path.is_dir():
        path = path / ATLAS_FILE
    if not path.is_file():
        raise AtlasError(f"No atlas at {path} (build one with `network-inspector atlas`).")
    atlas = read_json(path)
    layers = atlas.get("layers") if isinstance(atlas, dict) else None
    if not isinstance(layers, dict) or not all(k in atlas for k in ("model", "images", "skipped")) or not all(
            isinstance(v, dict) and {"channels", "top", "mean", "std", "frac_positive"} <= v.keys()
            for v in layers.values()):
        raise AtlasError(f"{path} is not a channel atlas (it lacks model, images, skipped or layers with "
                         f"channels, top, mean, std and frac_positive).")
    for name, layer in layers.items():
        if len(layer["top"]) != layer["channels"]:
            raise AtlasError(f"{path}: layer {name} lists {len(layer['top'])} channels' top images for "
                             f"{layer['channels']} channels.")
    return atlas


def thumbnail_dir(out_dir, layer: str) -> Path:
    """The folder of `layer`'s thumbnails."""
    return Path(out_dir) / THUMBS_DIR / layer


def thumbnail_path(out_dir, layer: str, channel: int, rank: int) -> Path:
    """Where the crop around the argmax of `layer`'s channel `channel`, top entry `rank` (0 = best), is."""
    return Path(thumbnail_file(out_dir, layer, channel, rank))


def thumbnail_file(out_dir, layer: str, channel: int, rank: int) -> str:
    """`thumbnail_path` as a string, made without pathlib (an atlas has thousands of them)."""
    return f"{out_dir}/{THUMBS_DIR}/{layer}/" + THUMB_NAME.format(channel=int(channel), rank=int(rank))


def regions_path(out_dir) -> Path:
    """Where each layer's geometry (the argmax regions of its positions) is kept."""
    return Path(out_dir) / THUMBS_DIR / REGIONS_FILE


def job_arguments(out_dir) -> dict:
    """The arguments of the job that made the atlas in `out_dir` ({} when its job file is missing)."""
    job_file = Path(out_dir) / JOB_FILE
    return read_json(job_file).get("arguments", {}) if job_file.is_file() else {}


def check_out_dir(out: Path, key: str, arguments: dict) -> dict | None:
    """The finished atlas when `out` already holds the atlas of the job `key`; None to go on (the job file is then
    written). AtlasError, with nothing changed, when `out` belongs to another job."""
    if out.exists() and not out.is_dir():
        raise AtlasError(f"--out {out} is a file; the atlas needs a folder.")
    job_file, atlas_file = out / JOB_FILE, out / ATLAS_FILE
    if job_file.is_file():
        theirs = read_json(job_file)
        if theirs.get("key") != key:
            args = theirs.get("arguments", {})
            what = "an unfinished atlas" if not atlas_file.is_file() else "the atlas"
            raise AtlasError(f"{out} holds {what} of a different job (model {args.get('model')}, data "
                             f"{args.get('data')}, layers {', '.join(args.get('layers', []))}, top "
                             f"{args.get('top')}); choose another --out or delete that folder.")
        if atlas_file.is_file() and not (out / f"{PARTIAL}.json").is_file():
            return read_atlas(out)
    elif atlas_file.is_file():
        raise AtlasError(f"{out} already holds an atlas.json that this job did not make; choose another --out "
                         f"or delete it.")
    out.mkdir(parents=True, exist_ok=True)
    write_json(job_file, {"key": key, "arguments": arguments})
    return None


class Checkpoint:
    """The saved state of an unfinished job: which images are done, the layers' top K and statistics, skips."""

    def __init__(self, out: Path, key: str, layers: tuple[str, ...], images: int) -> None:
        self.out, self.key, self.layers, self.images = out, key, layers, images
        self.arrays, self.meta = out / f"{PARTIAL}.npz", out / f"{PARTIAL}.json"

    def load(self) -> tuple[np.ndarray, dict[str, LayerTop], list[dict]]:
        """(which images are done, the layers' state, the skipped files) -- nothing done when there is no state."""
        nothing = np.zeros(self.images, bool), {}, []
        if not self.meta.is_file() or not self.arrays.is_file():
            return nothing
        meta = read_json(self.meta)
        if meta.get("key") != self.key:
            return nothing
        with np.load(self.arrays, allow_pickle=False) as arrays:
            tops = {path: LayerTop.from_state(arrays, f"L{i}") for i, path in enumerate(self.layers)
                    if f"L{i}/shape" in arrays}
            done = np.array(arrays["done"], bool)
        return done, tops, list(meta["skipped"])

    def save(self, done: np.ndarray, tops: dict[str, LayerTop], skipped: list[dict]) -> None:
        arrays = {"done": np.asarray(done, bool)}
        for i, path in enumerate(self.layers):
            if path in tops:
                arrays.update(tops[path].state(f"L{i}"))
        save_npz(self.arrays, arrays)
        write_json(self.meta, {"key": self.key, "done": int(np.count_nonzero(done)), "skipped": skipped})

    def clear(self) -> None:
        for path in (self.meta, self.arrays):
            path.unlink(missing_ok=True)


def write_json(path: Path, value) -> None:
    """Whole or not at all (inspector.core.writes); compact, so that the C encoder writes a large atlas quickly."""
    writes.write_json(path, value, separators=(",", ":"))


def read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AtlasError(f"Cannot read {path}: {exc}") from None


