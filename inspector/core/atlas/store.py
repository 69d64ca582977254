"""An atlas folder, the one place that knows its layout: what each file is called, reading and
writing them (JSON written atomically), the saved state of an unfinished job.

    OUT_DIR/atlas.json                          the atlas (read_atlas)
    OUT_DIR/atlas.job.json                      the job the folder belongs to: key and arguments
    OUT_DIR/atlas.partial.npz + .json           the state of an unfinished job (Checkpoint)
    OUT_DIR/thumbnails/LAYER/CHANNEL_RANK.png   the crop around a top entry's argmax (thumbnail_path)
    OUT_DIR/thumbnails/regions.json             each layer's geometry (regions_path)
    OUT_DIR/atlas.lock                          held by the one process building there (JobLock)
"""

from __future__ import annotations

import json
import os
import socket
import time
import zipfile
from pathlib import Path

import numpy as np

from .. import writes
from ..arguments import checked
from ..errors import AtlasError
from ..writes import save_npz
from .topk import LayerTop

ATLAS_FILE = "atlas.json"
JOB_FILE = "atlas.job.json"
PARTIAL = "atlas.partial"
THUMBS_DIR = "thumbnails"
THUMB_NAME = "{channel}_{rank}.png"  # in OUT_DIR/thumbnails/LAYER/
REGIONS_FILE = "regions.json"  # in OUT_DIR/thumbnails/
LOCK_FILE = "atlas.lock"
RESTART = "run again with --restart (restart=True) to start over, or delete that folder"


@checked
def read_atlas(out_dir: str | os.PathLike) -> dict:
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


@checked
def thumbnail_path(out_dir: str | os.PathLike, layer: str, channel: int, rank: int) -> Path:
    """Where the crop around the argmax of `layer`'s channel `channel`, top entry `rank` (0 = best), is."""
    return Path(thumbnail_file(out_dir, layer, channel, rank))


def thumbnail_file(out_dir, layer: str, channel: int, rank: int) -> str:
    """`thumbnail_path` as a string, made without pathlib (an atlas has thousands of them)."""
    return f"{out_dir}/" + thumbnail_relative(layer, channel, rank)


def thumbnail_relative(layer: str, channel: int, rank: int) -> str:
    """A thumbnail's path inside the atlas folder."""
    return f"{THUMBS_DIR}/{layer}/" + THUMB_NAME.format(channel=int(channel), rank=int(rank))


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
        if not isinstance(theirs, dict) or not isinstance(theirs.get("arguments", {}), dict):
            raise AtlasError(f"{job_file} is damaged (not the record of a job); {RESTART}.")
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
    writes.make_folder(out)
    write_json(job_file, {"key": key, "arguments": arguments})
    return None


def forget_job(out: Path, atlas: bool = False) -> None:
    """Remove what a job keeps in `out` (its job file and saved state; with `atlas`, its atlas.json
    too): for a failed start, or a restart."""
    for name in (JOB_FILE, f"{PARTIAL}.npz", f"{PARTIAL}.json", *((ATLAS_FILE,) if atlas else ())):
        (out / name).unlink(missing_ok=True)


class JobLock:
    """OUT_DIR/atlas.lock: one job builds in a folder at a time. It holds the process id, host and
    start time; a lock whose process is gone (on this host) is stale and taken over."""

    def __init__(self, out: Path) -> None:
        self.path = Path(out) / LOCK_FILE
        self.held = False

    def __enter__(self) -> "JobLock":
        writes.make_folder(self.path.parent)
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                holder = self._holder()
                if holder is not None:
                    raise AtlasError(f"{self.path.parent} is being built by process {holder['pid']} on "
                                     f"{holder['host']} (since {holder['since']}); wait for it to finish or stop "
                                     f"it, or choose another --out.") from None
                self.path.unlink(missing_ok=True)  # stale: its process is gone
                continue
            except OSError as exc:
                raise AtlasError(f"Cannot take the lock {self.path}: {writes.reason(exc)}.") from None
            with os.fdopen(fd, "w") as file:
                json.dump({"pid": os.getpid(), "host": socket.gethostname(),
                           "since": time.strftime("%Y-%m-%d %H:%M:%S")}, file)
            self.held = True
            return self
        raise AtlasError(f"Cannot take the lock {self.path}; another process keeps taking it.")

    def _holder(self) -> dict | None:
        """Who holds the lock, or None when it is stale (its process is gone, or the file is unreadable)."""
        try:
            holder = json.loads(self.path.read_text(encoding="utf-8"))
            pid, host = int(holder["pid"]), str(holder["host"])
        except (OSError, ValueError, KeyError, TypeError):
            # being written this very moment by the other process, or damaged: wait a little once
            time.sleep(0.2)
            try:
                holder = json.loads(self.path.read_text(encoding="utf-8"))
                pid, host = int(holder["pid"]), str(holder["host"])
            except (OSError, ValueError, KeyError, TypeError):
                return None
        if host != socket.gethostname():
            return holder  # another machine's process: it cannot be checked from here
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass  # alive, another user's
        return holder

    def __exit__(self, *_exc) -> None:
        if self.held:
            self.path.unlink(missing_ok=True)
            self.held = False


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
        if isinstance(meta, dict) and meta.get("key") != self.key:
            return nothing
        damaged = f"The saved state of this atlas in {self.out} is damaged"
        skipped = meta.get("skipped") if isinstance(meta, dict) else None
        if not isinstance(skipped, list) or not all(isinstance(s, dict) and isinstance(s.get("path"), str)
                                                    and isinstance(s.get("reason"), str) for s in skipped):
            raise AtlasError(f"{damaged} ({self.meta.name}: 'skipped' is not a list of files and reasons); "
                             f"{RESTART}.")
        try:
            with np.load(self.arrays, allow_pickle=False) as arrays:
                tops = {path: LayerTop.from_state(arrays, f"L{i}") for i, path in enumerate(self.layers)
                        if f"L{i}/shape" in arrays}
                done = np.array(arrays["done"])
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            raise AtlasError(f"{damaged} ({self.arrays.name} cannot be read: {exc}); {RESTART}.") from None
        if done.dtype != bool or done.shape != (self.images,):
            raise AtlasError(f"{damaged} ({self.arrays.name} records {done.size} images done or not, the data "
                             f"has {self.images}); {RESTART}.")
        for path, top in tops.items():
            shapes = {name: getattr(top, name).shape for name in ("score", "image", "pos")}
            if set(shapes.values()) != {(top.channels, top.top)} or top.mean.shape != (top.channels,) \
                    or int(top.image.max(initial=-1)) >= self.images:
                raise AtlasError(f"{damaged} ({self.arrays.name}: layer {path}'s state does not fit); {RESTART}.")
        return done, tops, skipped

    def save(self, done: np.ndarray, tops: dict[str, LayerTop], skipped: list[dict]) -> None:
        arrays = {"done": np.asarray(done, bool)}
        for i, path in enumerate(self.layers):
            if path in tops:
                arrays.update(tops[path].state(f"L{i}"))
        save_npz(self.arrays, arrays)
        write_json(self.meta, {"key": self.key, "done": int(np.count_nonzero(done)), "skipped": skipped})

    def saved(self) -> bool:
        """Whether this job has saved any state yet."""
        return self.meta.is_file() and self.arrays.is_file()

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


