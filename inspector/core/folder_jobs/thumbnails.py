"""Where a top entry's argmax lies in the picture, and the thumbnails cut around it.

Convolutional layers (a (B, C, H, W) map): the receptive field of a map position, measured once
per layer as the support of the input gradient of that position (one small backward on a random
input, outside the atlas's forward-only pass); it moves with the position by the map's stride.
Where it reaches past the picture, the crop is the whole picture. Transformer tokens on a patch
grid: a window around the token's patch (the attention reaches everywhere, so the receptive
field is the whole picture): at least twice the patch and a quarter of the picture's side.
Thumbnails are crops of the picture as the model sees it (resized and cropped, not normalised).
OUT_DIR/thumbnails/regions.json keeps each layer's geometry, for `argmax_region`.
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from ..common.arguments import checked
from ..common.errors import ArgumentValueError
from ..common.hooks import together
from ..sources.layers import channel_layouts
from ..storage.writes import make_folder, save_image, write_bytes, write_json
from .batches import decode
from .layout import Layout, layout_of

RF_CHUNK = 8  # layers whose receptive fields one backward measures
THUMBS_DIR = "thumbnails"
THUMB_NAME = "{channel}_{rank}.png"  # in OUT_DIR/thumbnails/LAYER/
REGIONS_FILE = "regions.json"  # in OUT_DIR/thumbnails/


def thumbnail_dir(out_dir, layer: str) -> Path:
    """The folder of `layer`'s thumbnails."""
    return Path(out_dir) / THUMBS_DIR / layer


@checked
def thumbnail_path(out_dir: str | os.PathLike, layer: str, channel: int, rank: int) -> Path:
    """Where the crop around the argmax of `layer`'s channel `channel`, top entry `rank` (0 = best), is: always
    inside `out_dir`'s thumbnails folder (a layer name that is absolute, empty, holds a NUL or a `.`/`..`
    step is an ArgumentValueError)."""
    parts = layer.split("/")
    if "\0" in layer or any(part in ("", ".", "..") for part in parts):
        raise ArgumentValueError(f"thumbnail_path(): layer must be a layer's name (a module path such as "
                                 f"layer1.0.conv1), not {_short(layer)}: the path would leave the atlas folder.")
    for what, value in (("channel", channel), ("rank", rank)):
        if value < 0:
            raise ArgumentValueError(f"thumbnail_path(): {what} must be at least 0, not {value}.")
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


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def layer_geometry(module, layers, grid, x: torch.Tensor) -> dict[str, dict]:
    """Per layer: input size, map size, stride, and the receptive field (or window) size and offset."""
    h_in, w_in = x.shape[-2:]
    shapes: dict[str, tuple] = {}
    _forward_shapes(module, layers, x, shapes)
    said = channel_layouts(module, x[:1])  # the model's channels-last word per layer (kept from its tree)
    layouts = {p: layout_of(p, shapes[p], grid, said.get(p)) for p in layers if p in shapes}
    out = {}
    spatial = [p for p, l in layouts.items() if l.kind in ("nchw", "nhwc")]
    fields = {}
    for i in range(0, len(spatial), RF_CHUNK):
        try:
            fields.update(_receptive_fields(module, spatial[i:i + RF_CHUNK], layouts, x))
        except Exception:  # a model autograd cannot go through: windows instead
            pass
    for path, layout in layouts.items():
        sy, sx = h_in / layout.height, w_in / layout.width
        geo = {"input": [h_in, w_in], "map": [layout.height, layout.width], "stride": [sy, sx],
               "size": None, "offset": [0.0, 0.0], "kind": "whole picture"}
        if path in fields and fields[path] is not None:
            size, offset = fields[path]
            geo.update(size=size, offset=offset, kind="receptive field")
        elif layout.kind == "tokens":
            side = [max(2 * sy, min(h_in, w_in) / 4), max(2 * sx, min(h_in, w_in) / 4)]
            geo.update(size=side, kind="window")
        out[path] = geo
    return out


def _forward_shapes(module, layers, x, shapes) -> None:
    named = dict(module.named_modules())

    def hook_for(path):
        def hook(_m, _a, output):
            if isinstance(output, (tuple, list)):
                output = next((o for o in output if isinstance(o, torch.Tensor)), None)
            if isinstance(output, torch.Tensor):
                shapes.setdefault(path, tuple(output.shape))
        return hook

    with together(named[p].register_forward_hook(hook_for(p)) for p in layers), torch.inference_mode():
        module(x)


def _receptive_fields(module, paths, layouts: dict[str, Layout], x):
    """{path: ([height, width], [offset_y, offset_x]) or None (reaches past the picture)} for the
    map position at the centre, from the support of the input gradient (sample i asks layer i)."""
    named = dict(module.named_modules())
    n = len(paths)
    h_in, w_in = x.shape[-2:]
    gen = torch.Generator().manual_seed(0)
    inputs = torch.randn((n, *x.shape[1:]), generator=gen).to(x.device).requires_grad_(True)
    picked: dict[str, torch.Tensor] = {}

    def hook_for(i, path):
        layout = layouts[path]
        cy, cx = layout.height // 2, layout.width // 2

        def hook(_m, _a, output):
            if isinstance(output, (tuple, list)):
                output = next((o for o in output if isinstance(o, torch.Tensor)), None)
            if path not in picked:
                v = layout.positions(output)[i]  # (C, P) of sample i
                picked[path] = v[:, cy * layout.width + cx].float().sum()
        return hook

    hooks = together(named[p].register_forward_hook(hook_for(i, p)) for i, p in enumerate(paths))
    # cuDNN's Winograd and FFT kernels leave rounding where the gradient is 0 (outside the field): not here
    with hooks, torch.enable_grad(), torch.backends.cudnn.flags(enabled=False):
        module(inputs)
        grad, = torch.autograd.grad(sum(picked[p] for p in paths), inputs)
    support = (grad.abs().sum(1) > 0).cpu().numpy()
    fields = {}
    for i, path in enumerate(paths):
        layout = layouts[path]
        rows, cols = np.nonzero(support[i].any(1))[0], np.nonzero(support[i].any(0))[0]
        if rows.size == 0 or rows[0] == 0 or cols[0] == 0 or rows[-1] == h_in - 1 or cols[-1] == w_in - 1:
            fields[path] = None
            continue
        sy, sx = h_in / layout.height, w_in / layout.width
        cy, cx = layout.height // 2, layout.width // 2
        size = [float(rows[-1] + 1 - rows[0]), float(cols[-1] + 1 - cols[0])]
        offset = [(rows[0] + rows[-1] + 1) / 2 - (cy + 0.5) * sy, (cols[0] + cols[-1] + 1) / 2 - (cx + 0.5) * sx]
        fields[path] = (size, [float(offset[0]), float(offset[1])])
    return fields


def region_box(geometry: dict, y: int, x: int) -> tuple[int, int, int, int]:
    """(left, top, right, bottom) in the model's input pixels of map position (y, x) of a layer."""
    h_in, w_in = geometry["input"]
    if geometry["size"] is None:
        return 0, 0, int(w_in), int(h_in)
    sy, sx = geometry["stride"]
    cy = (y + 0.5) * sy + geometry["offset"][0]
    cx = (x + 0.5) * sx + geometry["offset"][1]
    rh, rw = geometry["size"]
    top, left = int(round(cy - rh / 2)), int(round(cx - rw / 2))
    bottom, right = top + int(round(rh)), left + int(round(rw))
    return max(left, 0), max(top, 0), min(right, int(w_in)), min(bottom, int(h_in))


def argmax_region(out_dir, layer: str, y: int, x: int) -> tuple[int, int, int, int]:
    """The box (left, top, right, bottom) in the model's input of a top entry's argmax, from regions.json."""
    regions = json.loads(regions_path(out_dir).read_text(encoding="utf-8"))
    return region_box(regions[layer], y, x)


def write_thumbnails(loaded, job, out: Path, atlas: dict) -> None:
    """A PNG crop around every top entry's argmax (atlas.thumbnail_path), at most THUMB_SIDE pixels a side
    (larger regions scaled down), and regions.json. The same region of the same image (the whole picture for
    late layers) is encoded once; its other entries are hard links to that file (copies where links fail)."""
    by_image: dict[str, list[tuple[str, int, int, int, int]]] = {}
    for path, layer in atlas["layers"].items():
        make_folder(thumbnail_dir(out, path))
        for c, entries in enumerate(layer["top"]):
            for rank, e in enumerate(entries):
                by_image.setdefault(e["image"], []).append((path, c, rank, e["y"], e["x"]))
    geometry: dict[tuple, dict] = {}
    first: dict | None = None
    root = job.images.root
    saving, links = [], []
    with ThreadPoolExecutor(2, thread_name_prefix="atlas-thumbs") as pool:
        for name, entries in by_image.items():
            x = decode(root / name, job.preprocess)
            if isinstance(x, str):
                continue  # changed since the pass; its thumbnails are left out
            shape = tuple(x.shape)
            if shape not in geometry:
                geometry[shape] = layer_geometry(loaded.module, list(job.layers), job.grid, x.to(loaded.device))
                first = first or geometry[shape]
            picture = Image.fromarray(job.preprocess.to_display(x))
            written: dict[tuple[int, int, int, int], str] = {}
            for path, c, rank, y, xx in entries:
                box = region_box(geometry[shape][path], y, xx)
                target = thumbnail_file(out, path, c, rank)
                if box in written:
                    links.append((written[box], target))
                else:
                    written[box] = target
                    saving.append(pool.submit(_save, picture, box, target))
        for done in saving:
            done.result()  # a thumbnail that cannot be written is an error, not a silent gap
    for source, target in links:
        _link(source, target)
    write_json(regions_path(out), first or {}, indent=1)


THUMB_SIDE = 64


def _save(picture: Image.Image, box: tuple[int, int, int, int], target: str) -> None:
    crop = picture.crop(box)
    if max(crop.size) > THUMB_SIDE:
        crop.thumbnail((THUMB_SIDE, THUMB_SIDE), Image.BILINEAR)
    save_image(target, crop, fsync=False, compress_level=1)  # many small files: renamed whole, not fsynced


def _link(source: str, target: str) -> None:
    """`target` the same file as `source`: a hard link (atomic), or a copy written whole."""
    try:
        if os.path.lexists(target):
            os.unlink(target)
        os.link(source, target)
    except OSError:
        write_bytes(target, Path(source).read_bytes(), fsync=False)
