"""`capture --input DIR|GLOB --out OUTDIR`: one capture per image, OUTDIR/<relative path>.npz, one manifest."""

from __future__ import annotations

import sys
from pathlib import Path

from inspector.core.common.errors import InputError
from inspector.core.storage.outputs import output_folder
from inspector.core.records.manifest import run_manifest
from inspector.core.storage.writes import write_json

MANIFEST = "manifest.json"


def check_out(args) -> Path:
    """The folder a folder capture writes into, checked before the model loads: a new folder, an
    empty one, or one an earlier folder capture wrote (its manifest.json is there)."""
    from inspector.core import SpecError

    if not args.out:
        raise SpecError("capture --input FOLDER needs --out OUTDIR (one .npz per image is written there).")
    out = output_folder(args.out)
    if out.is_dir() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        raise SpecError(f"--out {out} already holds other files; with a folder of inputs name a new or empty "
                        f"folder (or one an earlier folder capture wrote).")
    return out


def capture_folder(args, loaded, out: Path) -> int:
    """Capture every image of a folder (nested folders too) or glob; unreadable files are skipped and listed."""
    from tqdm import tqdm

    from inspector.core import capture, load_input
    from inspector.core.inputs.files import list_images
    from inspector.core.storage.versions import versions

    images = list_images(args.input)
    done, skipped = [], []
    for path in tqdm(images.files, desc="capture", unit="img", file=sys.stderr, dynamic_ncols=True):
        name = images.relative(path)
        try:
            x = load_input(path, loaded.preprocess, loaded.input_shape)
        except InputError as exc:
            skipped.append({"path": name, "reason": str(exc)})
            continue
        result = capture(loaded, x, args.layers, args.sites, args.edit, args.target, args.device, args.input_grad)
        result.save_npz(out / f"{name}.npz")  # whole or not at all; the folders are made
        done.append({"image": name, "npz": f"{name}.npz", "target": result.target,
                     "predictions": [p.__dict__ for p in result.predictions[:5]], "warnings": result.warnings})
    manifest = run_manifest(args.model, loaded.weights, loaded.seed, str(args.input), layers=args.layers,
                            sites=args.sites, edits=list(args.edit), target=args.target, device=args.device,
                            versions=versions(), images=done, skipped=skipped)
    write_json(out / MANIFEST, manifest, indent=1, default=str)
    for s in skipped:
        print(f"skipped {s['path']}: {s['reason']}", file=sys.stderr)
    print(f"{len(done)} images captured, {len(skipped)} skipped -> {out / MANIFEST}")
    return 0
