"""A concept's pictures: the atlas's thumbnails (a crop of the region where the concept is strongest, in each of
its top images: `folder_jobs.write_thumbnails`, which also keeps the layer's regions) and one page per concept,
its top images side by side as the model saw them with that region outlined."""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw

from ..folder_jobs import decode, region_box, regions_path, write_thumbnails
from ..storage.writes import make_folder, save_image
from .store import PAGES_DIR, page_path

TILE = 96
GAP = 4
OUTLINE = (255, 64, 32)


def write_pictures(loaded, job, out: Path, record: dict) -> None:
    """Thumbnails (thumbnails/LAYER/CONCEPT_RANK.png, as an atlas's channels') and pages/concept_NNN.png."""
    layer = job.layer
    tops = [c["top"] for c in record["concepts"]]
    write_thumbnails(loaded, job.atlas, out, {"layers": {layer: {"top": tops}}})
    import json


    geometry = json.loads(regions_path(out).read_text(encoding="utf-8")).get(layer)
    make_folder(out / PAGES_DIR)
    pictures: dict[str, Image.Image | None] = {}
    for c, entries in enumerate(tops):
        if not entries:
            continue
        page = Image.new("RGB", (len(entries) * (TILE + GAP) - GAP, TILE), (255, 255, 255))
        for rank, e in enumerate(entries):
            if e["image"] not in pictures:
                x = decode(job.atlas.images.root / e["image"], job.atlas.preprocess)
                pictures[e["image"]] = None if isinstance(x, str) else Image.fromarray(job.atlas.preprocess.to_display(x))
            picture = pictures[e["image"]]
            if picture is None:
                continue
            tile = picture.copy()
            if geometry is not None:
                ImageDraw.Draw(tile).rectangle(_inclusive(region_box(geometry, e["y"], e["x"])), outline=OUTLINE,
                                               width=max(1, round(max(tile.size) / TILE)))
            tile.thumbnail((TILE, TILE), Image.BILINEAR)
            page.paste(tile, (rank * (TILE + GAP), 0))
        save_image(page_path(out, c), page, fsync=False)


def _inclusive(box):
    left, top, right, bottom = box
    return left, top, max(left, right - 1), max(top, bottom - 1)
