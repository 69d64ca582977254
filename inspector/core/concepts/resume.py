"""A saved concepts state checked against its job before it is believed (`State.load` has read it and checked its
record's fields and its arrays' kinds): the images done are those read and those skipped, the samples of the images
read fill each split's cache rows exactly, one after another; the phase, batch, fitting step and the fit's arrays
are what this job's settings make (shapes, finite values, signs, the step count); the cache files hold those rows
with the CRC-32 the state recorded; and last the checksum of the state's arrays and record. Any failure is one line
with the --restart hint."""

from __future__ import annotations

import zlib

import numpy as np

from ..folder_jobs import check_digest, check_fields, expect, skipped_images, whole
from .dictionary import LAYOUTS
from .fit import BLOCK, batch_rows
from .job import ConceptJob
from .store import CACHE_DIR, SPLITS, State

#: The most of a count a state can hold (rows, an image's height or width): beyond it a product overflows
MOST = 2**31 - 1
#: A decoder row of the sparse autoencoder is kept at unit norm after each step, to this much
UNIT = 1e-3


def check_state(state: State, job: ConceptJob) -> None:
    """ConceptError (`state.damaged`) unless the loaded `state` is one this job can have saved."""
    info, damaged, name = state.info, state.damaged, f"{state.meta.name}: info"
    check_fields(info, name, {"phase", "rows", "crc", "skipped", "batch"},
                 {"channels", "layout", "batch_rows", "step"}, damaged)
    if info["phase"] not in ("pass", "fit"):
        raise damaged(f"{name}: the phase must be pass or fit, not {_shown(info['phase'])}")
    whole(info["batch"], f"{name}: batch", 1, job.settings.batch, damaged)
    for field, high in (("rows", MOST * MOST), ("crc", 2**32 - 1)):
        value = info[field]
        if not isinstance(value, dict) or set(value) != set(SPLITS):
            raise damaged(f"{name}: {field} must give train and held, not {_shown(value)}")
        for split in SPLITS:
            whole(value[split], f"{name}: {field} of {split}", 0, high, damaged)
    names = {entry[0]: i for i, entry in enumerate(job.listing)}
    skipped = skipped_images(info["skipped"], names, state.done, state.meta.name, damaged)
    read = _check_images(state, skipped)
    if ("channels" in info) != bool(read.any()) or ("layout" in info) != ("channels" in info):
        raise damaged(f"{name}: channels and layout must be there once an image is read, and only then")
    channels = 0
    if read.any():
        channels = whole(info["channels"], f"{name}: channels", 1, MOST, damaged)
        if info["layout"] not in LAYOUTS:
            raise damaged(f"{name}: the layout must be one of {', '.join(LAYOUTS)}, not {_shown(info['layout'])}")
    for split in SPLITS:
        _check_rows(state, job, read, split)
    _check_fit(state, job, read, channels)
    _check_cache(state, channels)
    check_digest(state.arrays, state.record, damaged)


def _check_images(state: State, skipped: np.ndarray) -> np.ndarray:
    """(images,) bool, the images read: done and not skipped, each with its samples' start, height and width;
    nothing recorded of an image not read."""
    done, start, height, width = state.done, state.start, state.height, state.width
    read = done & ~skipped
    if ((start[~read] != -1) | (height[~read] != 0) | (width[~read] != 0)).any():
        raise state.damaged("samples are recorded for an image not read (not done yet, or skipped)")
    lacking = read & ((start < 0) | (height < 1) | (width < 1))
    if lacking.any():
        raise state.damaged(f"{int(lacking.sum())} of the images done were neither read (with a start, height "
                            f"and width) nor skipped")
    if (height > MOST).any() or (width > MOST).any() or (start > MOST * MOST).any():
        raise state.damaged(f"an image's height or width is past {MOST}")
    return read


def _check_rows(state: State, job: ConceptJob, read: np.ndarray, split: str) -> None:
    """The samples of the split's images read lie one after another from row 0 to the split's rows."""
    mine = np.nonzero(read & (job.held if split == "held" else ~job.held))[0]
    counts = state.height[mine] * state.width[mine]
    order = np.argsort(state.start[mine], kind="stable")
    starts, counts = state.start[mine][order], counts[order]
    expected = np.cumsum(counts) - counts
    if (starts != expected).any() or int(counts.sum()) != state.info["rows"][split]:
        raise state.damaged(f"the {split} images' samples (starts, heights and widths) do not fill the "
                            f"{state.info['rows'][split]} {split} rows the state counts, one after another")


def _check_fit(state: State, job: ConceptJob, read: np.ndarray, channels: int) -> None:
    """The phase, the fitting step and the fit's arrays are what this job's settings make at that step."""
    info, damaged, name = state.info, state.damaged, f"{state.meta.name}: info"
    fitting = "step" in info
    if info["phase"] == "fit" and not state.done.all():
        raise damaged(f"{name}: the phase is fit, but {int((~state.done).sum())} images are not done")
    if info["phase"] == "fit" and not read.any():
        raise damaged(f"{name}: the phase is fit, but no image was read")
    if (fitting or "batch_rows" in info or state.fit) and not (fitting and "batch_rows" in info and state.fit
                                                               and info["phase"] == "fit"):
        raise damaged(f"{name}: a fit's step, its batch of samples and its arrays come together, in the fit phase")
    if not fitting:
        return
    rows = batch_rows(job, channels)
    if info["batch_rows"] != rows or isinstance(info["batch_rows"], bool):
        raise damaged(f"{name}: the fit's batch must be {rows} samples for {channels} channels and "
                      f"--max-memory {job.settings.max_memory_mb:g}, not {_shown(info['batch_rows'])}")
    blocks = -(-info["rows"]["train"] // BLOCK)
    total = job.settings.epochs * -(-blocks // max(1, rows // BLOCK))
    step = whole(info["step"], f"{name}: step", 1, total, damaged)
    k, s = job.settings.k, job.settings.method
    if s == "nmf":
        want = {"components": ((k, channels), np.float32), "numerator": ((k, channels), np.float32),
                "denominator": ((k, channels), np.float32), "steps": ((2,), np.int64)}
    else:
        want = {f"{what}/{n}": (shape, np.float32) for what in ("p", "m", "v") for n, shape in (
            ("encoder", (k, channels)), ("encoder_bias", (k,)), ("decoder", (k, channels)), ("pre_bias", (channels,)))}
        want["scale_steps"] = ((2,), np.float64)
    check_fields(state.fit, "its fit", set(want), set(), damaged)
    for array, (shape, dtype) in want.items():
        expect(state.headers, state.arrays.name, f"fit/{array}", dtype, shape, damaged)
    values = {n: a for n, a in state.fit.items() if a.dtype.kind == "f"}
    bad = next((n for n, a in values.items() if not np.isfinite(a).all()), None)
    if bad is not None:
        raise damaged(f"the fit's {bad} holds NaN or infinite values")
    if s == "nmf":
        negative = next((n for n in ("components", "numerator", "denominator") if (state.fit[n] < 0).any()), None)
        if negative:
            raise damaged(f"the fit's {negative} holds negative values (NMF's are not negative)")
        steps, first = (int(v) for v in state.fit["steps"])
        if steps != step or not 1 <= first <= rows:
            raise damaged(f"the fit's steps ({steps}, first batch {first}) are not the {step} steps taken, batches "
                          f"of at most {rows}")
    else:
        scale, steps = (float(v) for v in state.fit["scale_steps"])
        if steps != step or not scale > 0:
            raise damaged(f"the fit's scale ({scale:g}) and steps ({steps:g}) are not above 0 and the {step} steps "
                          f"taken")
        if (np.abs(np.linalg.norm(state.fit["p/decoder"], axis=1) - 1) > UNIT).any():
            raise damaged("the fit's decoder rows are not of unit norm")
        if (state.fit["v/encoder"] < 0).any() or any((state.fit[f"v/{n}"] < 0).any() for n in (
                "encoder_bias", "decoder", "pre_bias")):
            raise damaged("the fit's second moments are negative")


def _check_cache(state: State, channels: int) -> None:
    """The cache files hold at least the rows the state counts, with the CRC-32 it recorded."""
    for split in SPLITS:
        rows, crc = state.info["rows"][split], state.info["crc"][split]
        path = state.out / CACHE_DIR / f"{split}.f32"
        size = rows * channels * 4
        if not size:
            if crc:
                raise state.damaged(f"the {split} samples' CRC-32 is {crc} with no sample")
            continue
        if not path.is_file() or path.stat().st_size < size:
            raise state.damaged(f"{path.name} in {CACHE_DIR} holds fewer than the {rows} samples the state counts")
        found = 0
        with open(path, "rb") as file:
            left = size
            while left:
                chunk = file.read(min(left, 2**24))
                if not chunk:
                    break
                found = zlib.crc32(chunk, found)
                left -= len(chunk)
        if found != crc:
            raise state.damaged(f"the samples in {CACHE_DIR}/{path.name} changed after the job saved them "
                                f"(CRC-32 {found}, the state's {crc})")


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
