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

import os
import zipfile
from pathlib import Path

import numpy as np

from .. import folder_jobs
from ..common.arguments import checked
from ..common.errors import AtlasError
from ..folder_jobs import (KINDS, TOP_FIELDS, FolderJob, FolderKind, LayerTop, check_count, check_digest, check_done,
                           expect, npz_headers, only, read_json, read_member, save_state, saved_record)
from ..storage.paths import check_name

JOB_FILE, ATLAS_FILE = KINDS["atlas"]  # "atlas.job.json", "atlas.json"
PARTIAL = "atlas.partial"
RESTART = "run again with --restart (restart=True) to start over, or delete that folder"


@checked
def read_atlas(out_dir: str | os.PathLike) -> dict:
    """The atlas.json in `out_dir` (or the file itself), checked to be an atlas; AtlasError otherwise."""
    path = Path(check_name(out_dir, "The atlas folder", AtlasError))
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
        _check_layer(path, name, layer)
    return atlas


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_layer(path: Path, name: str, layer: dict) -> None:
    """AtlasError, in one line, unless `layer` (atlas.json's entry `name`) holds what an atlas writes: a
    whole number of channels, for each its top entries (an image path without NUL, a score that is a
    number and not NaN, y and x whole numbers from 0) and the statistics, one number per channel."""
    if not name or "\0" in name:
        raise AtlasError(f"{path} is damaged: a layer's name is {name!r} (empty or with a NUL).")
    channels = layer["channels"]
    if not _whole(channels) or channels < 0:
        raise AtlasError(f"{path} is damaged: layer {name}: channels must be a whole number, not {channels!r}.")
    if not isinstance(layer["top"], list) or len(layer["top"]) != channels:
        count = len(layer["top"]) if isinstance(layer["top"], list) else "no list of"
        raise AtlasError(f"{path}: layer {name} lists {count} channels' top images for {channels} channels.")
    for c, entries in enumerate(layer["top"]):
        if not isinstance(entries, list):
            raise AtlasError(f"{path} is damaged: {name} channel {c}: its top entries are not a list.")
        for r, e in enumerate(entries):
            where = f"{path} is damaged: {name} channel {c} entry {r}"
            if not isinstance(e, dict) or not {"image", "score", "y", "x"} <= e.keys():
                raise AtlasError(f"{where} is not an image, score, y and x.")
            if not isinstance(e["image"], str) or not e["image"] or "\0" in e["image"]:
                raise AtlasError(f"{where}: the image must be a path without NUL, not {_short(e['image'])}.")
            if not _number(e["score"]) or e["score"] != e["score"]:
                raise AtlasError(f"{where}: the score must be a number, not {_short(e['score'])}.")
            for axis in ("y", "x"):
                if not _whole(e[axis]) or e[axis] < 0:
                    raise AtlasError(f"{where}: {axis} must be a whole number from 0, not {_short(e[axis])}.")
    for key in ("mean", "std", "frac_positive"):
        values = layer[key]
        if not isinstance(values, list) or len(values) != channels:
            count = len(values) if isinstance(values, list) else "no list of"
            raise AtlasError(f"{path} is damaged: {name}: {key} holds {count} numbers for {channels} channels.")
        if not all(_number(v) for v in values):
            raise AtlasError(f"{path} is damaged: {name}: {key} holds something other than numbers.")


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def job_arguments(out_dir) -> dict:
    """The arguments of the job that made the atlas in `out_dir` ({} when its job file is missing)."""
    job_file = Path(out_dir) / JOB_FILE
    return read_json(job_file).get("arguments", {}) if job_file.is_file() else {}


def _other_job(out: Path, args: dict, finished: bool) -> str:
    what = "the atlas" if finished else "an unfinished atlas"
    layers = args.get("layers") if isinstance(args.get("layers"), list) else []
    return (f"{out} holds {what} of a different job (model {args.get('model')}, data {args.get('data')}, layers "
            f"{', '.join(map(str, layers))}, top {args.get('top')}); choose another --out, or {RESTART}.")


FOLDER = FolderKind("atlas", AtlasError, RESTART, "the atlas needs a folder",
                    f"already holds an {ATLAS_FILE} that this job did not make; choose another --out or delete it.",
                    _other_job, lambda out: read_atlas(out))


def check_out_dir(out: Path, key: str, arguments: dict) -> dict | None:
    """The finished atlas when `out` already holds the atlas of the job `key`; None to go on (the job file is then
    written). AtlasError, with nothing changed, when `out` belongs to another job."""
    return folder_jobs.check_out_dir(out, FOLDER, key, arguments)


def check_folder(out: Path) -> None:
    """AtlasError, with nothing changed, when `out` is a file or holds another kind of job (concepts)."""
    folder_jobs.check_folder(out, FOLDER)


def forget_job(out: Path, atlas: bool = False) -> None:
    """Remove what a job keeps in `out` (its job file and saved state; with `atlas`, its atlas.json
    too): for a failed start, or a restart."""
    folder_jobs.forget_job(out, FOLDER, results=atlas)


class Checkpoint:
    """The saved state of an unfinished job: which images are done, the positions each image read gave (over the
    job's layers; 0: not read), the layers' top K and statistics, the skipped files.

    Nothing of it is believed before it is checked (`load`): its record's fields, each .npy header's kind and shape
    before its data is read, then every array's values against what a job can have written and against the
    listing (the images done are those read or skipped; the counts are the positions of the images read), and
    last the checksum of the arrays and the record (`folder_jobs`)."""

    def __init__(self, out: Path, key: str, layers: tuple[str, ...], images: int, top: int | None = None,
                 names: tuple[str, ...] = ()) -> None:
        self.out, self.key, self.layers, self.images, self.top = out, key, layers, images, top
        self.names = {name: i for i, name in enumerate(names)}  # the listing's relative paths
        self.arrays, self.meta = out / f"{PARTIAL}.npz", out / f"{PARTIAL}.json"
        self.seen = np.zeros(images, np.int64)

    def damaged(self, why: str) -> AtlasError:
        return AtlasError(f"The saved state of this atlas in {self.out} is damaged ({why}); {RESTART}.")

    def load(self) -> tuple[np.ndarray, dict[str, LayerTop], list[dict]]:
        """(which images are done, the layers' state, the skipped files) -- nothing done when there is no state;
        `seen` is set too."""
        nothing = np.zeros(self.images, bool), {}, []
        meta = saved_record(self.meta, self.arrays, self.key, self.damaged)
        if meta is None:
            return nothing
        try:
            headers = npz_headers(self.arrays)
            self._check_headers(headers)
            with np.load(self.arrays, allow_pickle=False) as arrays:
                done, seen = np.array(arrays["done"]), np.array(arrays["seen"])
                tops = {path: LayerTop.from_state(arrays, f"L{i}") for i, path in enumerate(self.layers)
                        if f"L{i}/shape" in headers}
        except AtlasError:
            raise
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            raise self.damaged(f"{self.arrays.name} cannot be read: {exc}") from None
        skipped = check_done(meta, done, self.names, self.images, self.meta.name, self.damaged)
        self._check_seen(done, seen, skipped, tops)
        check_count(meta, done, self.meta.name, self.arrays.name, self.damaged)
        for path, top in tops.items():
            self._check_values(path, top, seen)
        counted = sum(float(top.count[0]) for top in tops.values())
        if tops and counted != float(seen.sum()):
            raise self.damaged(f"the layers count {counted:.0f} positions, the images read gave {int(seen.sum())}")
        check_digest(self.arrays, meta, self.damaged)
        self.seen = seen
        return done, tops, meta["skipped"]

    def _check_headers(self, headers: dict[str, tuple[tuple, np.dtype]]) -> None:
        """Every array there, of its kind and shape, before any is read (a header can declare 10**13 values);
        every layer's or none (none before an image was read)."""
        file = self.arrays.name
        prefixes = {f"L{i}/" for i in range(len(self.layers))}
        only(headers, file, lambda name: name in ("done", "seen") or (
            name[:name.find("/") + 1] in prefixes and name.split("/", 1)[1] in (*TOP_FIELDS, "shape")), self.damaged)
        expect(headers, file, "done", bool, (self.images,), self.damaged, per_image=True)
        expect(headers, file, "seen", np.int64, (self.images,), self.damaged, per_image=True)
        present = [f"L{i}/shape" in headers for i in range(len(self.layers))]
        if any(present) and not all(present):
            missing = self.layers[present.index(False)]
            raise self.damaged(f"{file} lacks layer {missing}'s state (L{present.index(False)}/shape)")
        for i, path in enumerate(self.layers):
            prefix = f"L{i}"
            if not present[i]:
                if any(name.startswith(f"{prefix}/") for name in headers):
                    raise self.damaged(f"{file} lacks {prefix}/shape")
                continue
            expect(headers, file, f"{prefix}/shape", np.int64, (3,), self.damaged)
            channels, top, width = (int(v) for v in read_member(self.arrays, f"{prefix}/shape"))
            if channels < 1 or width < 1 or top < 1:
                raise self.damaged(f"layer {path} has {channels} channels, top {top} and a map width of {width}")
            if self.top is not None and top != self.top:
                raise self.damaged(f"layer {path} keeps the top {top}, the job {self.top}")
            for name in ("score", "image", "pos"):
                expect(headers, file, f"{prefix}/{name}", np.float32 if name == "score" else np.int64,
                       (channels, top), self.damaged)
            for name in ("count", "mean", "m2"):
                expect(headers, file, f"{prefix}/{name}", np.float64, (channels,), self.damaged)
            expect(headers, file, f"{prefix}/positive", np.int64, (channels,), self.damaged)

    def _check_seen(self, done: np.ndarray, seen: np.ndarray, skipped: np.ndarray, tops: dict) -> None:
        """The images done are those read (positions seen) and those skipped."""
        read = done & ~skipped
        if (seen < 0).any() or (seen[~read] != 0).any():
            raise self.damaged("positions are recorded for an image not read (not done yet, or skipped)")
        if (seen[read] == 0).any():
            raise self.damaged(f"{int((seen[read] == 0).sum())} of the images done were neither read nor skipped")
        if bool(tops) != bool(read.any()):
            raise self.damaged("the layers' state is missing" if read.any() else "it holds layers' state before "
                               "any image was read")

    def _check_values(self, path: str, top: LayerTop, seen: np.ndarray) -> None:
        """What a job can have written: kept entries first, best first, of images read, each once, with a
        score that is not NaN and a position on the image's map; as many as the images read allow (fewer only in
        a channel whose activations were not all finite); empty slots after them; counts that are whole
        numbers from 0, the same for every channel; positives within them; sums of squares not negative; a mean
        that is not finite only beside sums of squares that are NaN (what a model whose activations hold NaN or
        inf leaves), and nothing but zeros before any position was counted."""
        image, score, pos = top.image, top.score, top.pos
        kept = image >= 0
        if ((image < -1) | (image >= self.images)).any():
            bad = image[(image < -1) | (image >= self.images)][0]
            raise self.damaged(f"layer {path}'s image indices must be from -1 to {self.images - 1}, one is {bad}")
        if (kept[:, 1:] & ~kept[:, :-1]).any():
            raise self.damaged(f"layer {path} has kept entries after empty ones")
        if not (seen[image[kept]] > 0).all():
            raise self.damaged(f"layer {path} keeps an image not done yet or not read")
        ordered = np.sort(np.where(kept, image, -1 - np.arange(image.shape[1])), axis=1)
        if (ordered[:, 1:] == ordered[:, :-1]).any():
            raise self.damaged(f"layer {path} keeps one image twice in a channel's top")
        if np.isnan(score[kept]).any() or (score[~kept] != -np.inf).any() or (pos[~kept] != 0).any():
            raise self.damaged(f"layer {path}'s scores are NaN or not -inf where nothing is kept")
        both = kept[:, 1:]
        a, b = score[:, :-1].astype(np.float64), score[:, 1:].astype(np.float64)
        if (both & ~((a > b) | ((a == b) & (image[:, :-1] < image[:, 1:])))).any():
            raise self.damaged(f"layer {path}'s top entries are not best first")
        count = top.count
        if not np.isfinite(count).all() or (count < 0).any() or (count != np.floor(count)).any() \
                or (count != count[0]).any():
            raise self.damaged(f"layer {path}'s counts must be the same whole number from 0 for every channel, "
                               f"they are {_short(count.tolist())}")
        if ((pos < 0) | (kept & (pos >= count[:, None]))).any():
            raise self.damaged(f"layer {path}'s positions must be from 0 to less than the positions seen "
                               f"({int(count[0])}), one is {int(pos[(pos < 0) | (pos >= count[:, None])][0])}")
        past = kept & (pos >= seen[np.maximum(image, 0)])
        if past.any():
            raise self.damaged(f"layer {path}'s position {int(pos[past][0])} is past its map (its image gave "
                               f"{int(seen[image[past][0]])} positions)")
        if (top.m2 < 0).any() or np.isneginf(top.m2).any():
            raise self.damaged(f"layer {path}'s sums of squares must not be negative")
        if ((top.positive < 0) | (top.positive > count)).any():
            raise self.damaged(f"layer {path}'s positive counts must be from 0 to the count ({int(count[0])})")
        finite = np.isfinite(top.mean)
        if (finite & np.isnan(top.m2)).any() or (~finite & ~np.isnan(top.m2)).any():
            raise self.damaged(f"layer {path}'s means and sums of squares disagree: a mean is not finite only where "
                               f"the sums of squares are NaN")
        if count[0] == 0 and ((top.mean != 0) | (top.m2 != 0)).any():
            raise self.damaged(f"layer {path} has statistics before any position was counted")
        read = int((seen > 0).sum())
        held = kept.sum(1)
        if (held > min(top.top, read)).any() or (finite & (held != min(top.top, read))).any():
            raise self.damaged(f"layer {path} keeps {_short(held.tolist())} entries per channel; {read} images read "
                               f"fill {min(top.top, read)} of the top {top.top}")

    def check_fits(self, path: str, top: LayerTop, channels: int, width: int, positions: int) -> None:
        """AtlasError when the saved state of `path` does not fit the layer as the model gives it: its channels,
        its map's width, and every kept position on the map (`positions`: its height times its width)."""
        if (top.channels, top.width) != (channels, width):
            raise self.damaged(f"layer {path}'s state has {top.channels} channels and a map {top.width} wide; the "
                               f"layer has {channels} channels and a map {width} wide")
        past = (top.image >= 0) & (top.pos >= positions)
        if past.any():
            raise self.damaged(f"layer {path}'s position {int(top.pos[past][0])} is past its map of "
                               f"{positions // width} x {width}")

    def save(self, done: np.ndarray, tops: dict[str, LayerTop], skipped: list[dict]) -> None:
        arrays = {"done": np.asarray(done, bool), "seen": np.asarray(self.seen, np.int64)}
        for i, path in enumerate(self.layers):
            if path in tops:
                arrays.update(tops[path].state(f"L{i}"))
        save_state(self.arrays, self.meta, arrays, {"key": self.key, "done": int(np.count_nonzero(done)),
                                                    "skipped": skipped})

    def saved(self) -> bool:
        """Whether this job has saved any state yet."""
        return self.meta.is_file() and self.arrays.is_file()

    def clear(self) -> None:
        for path in (self.meta, self.arrays):
            path.unlink(missing_ok=True)


def checkpoint_of(job: FolderJob, out: Path) -> Checkpoint:
    """Where `job` keeps its state in `out` between runs."""
    return Checkpoint(out, job.key, job.layers, len(job.images), job.top, job.names)
