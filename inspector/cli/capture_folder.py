"""`capture --input DIR|GLOB --out OUTDIR`: one capture per image, OUTDIR/<relative path>.npz, one manifest."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from inspector.core.records.manifest import run_manifest

MANIFEST = "manifest.json"


def capture_folder(args, loaded) -> int:
    """Capture every image of a folder (nested folders too) or glob; unreadable files are skipped and listed."""
    from tqdm import tqdm

    from inspector.core import SpecError, capture, load_input
    from inspector.core.errors import InputError
    from inspector.core.inputs.files import list_images
    from inspector.core.versions import versions

    if not args.out:
        raise SpecError("capture --input FOLDER needs --out OUTDIR (one .npz per image is written there).")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise SpecError(f"--out {out} is a file; with a folder of inputs it must be a folder.")
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
        target = out / f"{name}.npz"
        target.parent.mkdir(parents=True, exist_ok=True)
        result.save_npz(target)
        done.append({"image": name, "npz": f"{name}.npz", "target": result.target,
                     "predictions": [p.__dict__ for p in result.predictions[:5]], "warnings": result.warnings})
    manifest = run_manifest(args.model, loaded.weights, loaded.seed, str(args.input), layers=args.layers,
                            sites=args.sites, edits=list(args.edit), target=args.target, device=args.device,
                            versions=versions(), images=done, skipped=skipped)
    out.mkdir(parents=True, exist_ok=True)
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1, default=str) + "\n", encoding="utf-8")
    for s in skipped:
        print(f"skipped {s['path']}: {s['reason']}", file=sys.stderr)
    print(f"{len(done)} images captured, {len(skipped)} skipped -> {out / MANIFEST}")
    return 0
